// SPDX-License-Identifier: MIT
#include "ui/memoryview.h"

#include "core/analysis/timelinetables.h"

#include <QComboBox>
#include <QElapsedTimer>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QTimer>
#include <QVBoxLayout>

namespace optlog {

namespace {

// Two charts a row side by side: each stays wide enough to read its phases.
constexpr int kColumns = 2;

const MemoryTimeline *timelineOf(const RunSummary &summary, MemoryView::Step step)
{
    for (const MemoryTimeline &timeline : summary.timelines)
        if (step == MemoryView::Step::FirstMeasured ? timeline.measuredStep : timeline.firstStep)
            return &timeline;
    return nullptr;
}

} // namespace

MemoryView::MemoryView(QWidget *parent)
    : QWidget(parent)
    , m_step(new QComboBox)
    , m_arrangement(new QComboBox)
    , m_summary(new QLabel)
    , m_area(new QWidget)
    , m_grid(new QGridLayout(m_area))
{
    m_step->addItem(tr("First measured step (steady)"));
    m_step->addItem(tr("First step (AdamW's moments made)"));
    m_arrangement->addItem(tr("Side by side"));
    m_arrangement->addItem(tr("Overlaid, aligned by phase"));
    auto *controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Step:")));
    controls->addWidget(m_step);
    controls->addWidget(new QLabel(tr("Show:")));
    controls->addWidget(m_arrangement);
    controls->addStretch();
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(m_summary);
    layout->addWidget(m_area, 1);
    connect(m_step, &QComboBox::currentIndexChanged, this, [this] { redraw(); });
    connect(m_arrangement, &QComboBox::currentIndexChanged, this, [this] { redraw(); });
    redraw();
}

void MemoryView::setRuns(const QList<RunSnapshotPtr> &runs)
{
    if (runs == m_runs) // the same snapshots: a finished run's never change
        return;
    m_runs = runs;
    if (isVisible())
        redraw();
    else
        m_stale = true;
}

void MemoryView::setStep(Step step)
{
    m_step->setCurrentIndex(step == Step::FirstMeasured ? 0 : 1);
}

void MemoryView::setArrangement(Arrangement arrangement)
{
    m_arrangement->setCurrentIndex(arrangement == Arrangement::SideBySide ? 0 : 1);
}

QString MemoryView::summaryText() const
{
    return m_summary->text();
}

void MemoryView::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    if (m_stale)
        redraw();
}

QList<TimelineChart::Shown> MemoryView::shownTimelines(QStringList &without) const
{
    const Step step = m_step->currentIndex() == 0 ? Step::FirstMeasured : Step::First;
    QList<TimelineChart::Shown> shown;
    for (int i = 0; i < m_runs.size(); ++i) {
        const RunSummary &summary = m_runs[i]->summary;
        const QString name = QString::fromStdString(summary.run.name);
        const MemoryTimeline *timeline = timelineOf(summary, step);
        if (!timeline) {
            without << name;
            continue;
        }
        shown << TimelineChart::shownOf(summary, *timeline, i);
    }
    return shown;
}

void MemoryView::redraw()
{
    m_stale = false;
    QStringList without;
    const QList<TimelineChart::Shown> shown = shownTimelines(without);
    const bool overlaid = m_arrangement->currentIndex() == 1;
    const int charts = shown.isEmpty() ? 0 : overlaid ? 1 : int(shown.size());
    // Charts are made once and hidden when not needed: making a chart view costs more than drawing it.
    while (m_made.size() < charts) {
        auto *chart = new TimelineChart(QString());
        chart->setMinimumSize(360, 260);
        m_grid->addWidget(chart, int(m_made.size()) / kColumns, int(m_made.size()) % kColumns);
        m_made << chart;
    }
    m_charts = m_made.mid(0, charts);
    for (int i = charts; i < m_made.size(); ++i) // the rest show as they are drawn
        m_made[i]->hide();
    // One chart at a time, each drawn and painted before the next: a page of four never holds the
    // window for the time of all four.
    m_pending.clear();
    if (overlaid && !shown.isEmpty()) {
        m_pending.push_back({m_charts.front(), tr("%n run(s), aligned by phase", nullptr, int(shown.size())), shown, 0});
    } else {
        double highest = 0; // one scale side by side
        for (const TimelineChart::Shown &s : shown)
            highest = std::max({highest, double(s.timeline.peakBytes()), double(s.predictedPeak), double(s.budget)});
        for (int i = 0; i < charts; ++i)
            m_pending.push_back({m_charts[i], shown[i].label, {shown[i]}, highest});
    }
    m_lastDrawMs = 0;
    drawNext();
    QStringList lines;
    for (const TimelineChart::Shown &s : shown)
        lines << s.label.toHtmlEscaped() + QStringLiteral(": ")
                     + QString::fromStdString(timelineTitle(s.timeline)).toHtmlEscaped()
                     + (s.predictedPhase.isEmpty()
                            ? QString()
                            : tr("; the memory model predicts its peak at %1").arg(s.predictedPhase));
    if (!without.isEmpty())
        lines << tr("No timeline of this step: %1 (an engine run records its first and first measured step, a "
                    "recorded run the step run.memory measured).")
                     .arg(without.join(QStringLiteral(", ")).toHtmlEscaped());
    if (m_runs.isEmpty())
        lines << tr("Select runs in the Runs list to see when in a step their memory peaks.");
    m_summary->setText(lines.join(QStringLiteral("<br>")));
}

void MemoryView::drawNext()
{
    if (m_pending.isEmpty())
        return;
    const Pending next = m_pending.takeFirst();
    QElapsedTimer timer;
    timer.start();
    next.chart->chart()->setTitle(next.title);
    next.chart->setTimelines(next.shown, next.yMax);
    next.chart->show();
    m_lastDrawMs = std::max(m_lastDrawMs, double(timer.nsecsElapsed()) / 1e6);
    if (!m_pending.isEmpty()) // after this one is painted
        QTimer::singleShot(0, this, &MemoryView::drawNext);
}

} // namespace optlog
