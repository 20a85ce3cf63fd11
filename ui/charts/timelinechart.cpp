// SPDX-License-Identifier: MIT
#include "ui/charts/timelinechart.h"

#include "core/contract/format.h"
#include "ui/charts/charttheme.h"
#include "ui/charts/linechart.h"

#include <QAreaSeries>
#include <QCategoryAxis>
#include <QChart>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QPen>
#include <QScatterSeries>
#include <algorithm>

namespace optlog {

namespace {

// The bands: what a phase is part of, in the order a step runs them.
enum class Band { Forward, Loss, Backward, Optimizer };

Band bandOf(StepPart part)
{
    switch (part) {
    case StepPart::Forward: return Band::Forward;
    case StepPart::Loss: return Band::Loss;
    case StepPart::Backward: return Band::Backward;
    default: return Band::Optimizer; // gradient reduction, numerics, master gradients, unscale and clip, the step
    }
}

QString bandName(Band band)
{
    switch (band) {
    case Band::Forward: return QObject::tr("forward");
    case Band::Loss: return QObject::tr("loss");
    case Band::Backward: return QObject::tr("backward");
    case Band::Optimizer: return QObject::tr("optimizer");
    }
    return {};
}

QColor bandColor(Band band)
{
    static const QColor colors[] = {QColor(70, 130, 220), QColor(150, 90, 200), QColor(230, 140, 40),
                                    QColor(60, 170, 90)};
    QColor color = colors[int(band)];
    color.setAlpha(38);
    return color;
}

// The model's states, lightest first, under the curve.
QColor roleColor(int index)
{
    static const QColor colors[] = {QColor(120, 120, 120), QColor(160, 160, 160), QColor(95, 95, 95),
                                    QColor(185, 185, 185), QColor(140, 140, 140)};
    QColor color = colors[index % 5];
    color.setAlpha(110);
    return color;
}

// Where a timeline's phase ends: the next one's first event, or the step's last.
int64_t phaseEnd(const MemoryTimeline &timeline, size_t phase)
{
    return phase + 1 < timeline.phases.size() ? timeline.phases[phase + 1].firstEvent : timeline.events;
}

} // namespace

TimelineChart::TimelineChart(const QString &title, QWidget *parent)
    : QChartView(parent)
    , m_x(new QCategoryAxis)
    , m_y(roundAxis(tr("bytes in use")))
{
    m_x->setTitleText(tr("phases of the step"));
    m_x->setLabelsPosition(QCategoryAxis::AxisLabelsPositionCenter);
    m_x->setTruncateLabels(false);
    QChart *c = setUpChartView(this, title);
    addAxes(c, m_x, m_y);
    // Beside the plot, one entry a line: the floor's roles, the peaks and levels with their bytes.
    c->legend()->setAlignment(Qt::AlignRight);
}

TimelineChart::Shown TimelineChart::shownOf(const RunSummary &summary, const MemoryTimeline &timeline, int colorIndex)
{
    Shown s;
    s.label = QString::fromStdString(summary.run.name);
    s.timeline = timeline;
    s.colorIndex = colorIndex;
    for (const MemoryRow &row : summary.memory)
        if (row.role == MemoryRole::Peak && row.source == MemorySource::Predicted)
            s.predictedPeak = row.bytes;
    s.predictedPhase = QString::fromStdString(summary.predictedPeakPhase);
    if (summary.config && !summary.config->memory.budget.empty())
        s.budget = parseBytes(summary.config->memory.budget, "memory.budget");
    return s;
}

QVector<QPointF> TimelineChart::phaseAlignedPoints(const MemoryTimeline &timeline)
{
    QVector<QPointF> points;
    if (timeline.phases.empty())
        return points;
    points.reserve(qsizetype(timeline.eventOfPoint.size()) + 1);
    points.append({0, double(timeline.phases.front().startBytes)});
    for (size_t i = 0; i < timeline.eventOfPoint.size(); ++i) {
        const int64_t event = timeline.eventOfPoint[i];
        const size_t phase = timeline.phaseOfEvent(event);
        const int64_t first = timeline.phases[phase].firstEvent;
        const double length = double(std::max<int64_t>(1, phaseEnd(timeline, phase) - first));
        // An event counts at its end: the bytes after it, where the next begins.
        points.append({double(phase) + double(event - first + 1) / length, double(timeline.bytesOfPoint[i])});
    }
    return points;
}

void TimelineChart::setTimelines(const QList<Shown> &shown, double yMax)
{
    QChart *c = chart();
    c->removeAllSeries();
    m_unlisted.clear();
    m_peakTexts.clear();
    m_highest = 0;
    for (const Shown &s : shown) {
        m_highest = std::max({m_highest, double(s.timeline.peakBytes()), double(s.predictedPeak), double(s.budget)});
        const int64_t phase = s.timeline.peakPhase();
        m_peakTexts << (shown.size() > 1 ? s.label + QStringLiteral(": ") : QString())
                           + tr("peak %1 at %2")
                                 .arg(QString::fromStdString(formatBytes(s.timeline.peakBytes())),
                                      phase >= 0 ? QString::fromStdString(s.timeline.phases[size_t(phase)].name())
                                                 : tr("no phase"));
    }
    const double top = std::max(yMax, m_highest) * 1.05;
    if (shown.isEmpty() || shown.front().timeline.phases.empty()) {
        setAxisRange(m_y, 0, 1, AxisUnit::Bytes);
        return;
    }
    const MemoryTimeline &first = shown.front().timeline;
    const double width = double(first.phases.size());
    addBands(first, top);
    addFloor(first);
    for (int i = 0; i < shown.size(); ++i) {
        const Shown &s = shown[i];
        // No more than two points a pixel column: each column keeps its lowest and highest.
        const QVector<QPointF> points = LineChart::downsample(phaseAlignedPoints(s.timeline),
                                                              std::max(200, 2 * int(plotWidth())));
        auto *line = new QLineSeries;
        line->setName(s.label);
        line->setPen(QPen(runColor(s.colorIndex), 1.6));
        line->replace(QList<QPointF>(points.begin(), points.end()));
        c->addSeries(line);
        if (shown.size() == 1) // the chart's title names its run
            unlist(line);
        const QString of = shown.size() > 1 ? s.label + QStringLiteral(": ") : QString();
        if (points.isEmpty()) // a timeline from elsewhere may hold no phase: nothing to mark
            continue;
        // The peak: its point, named with its bytes and phase.
        auto *peak = new QScatterSeries;
        peak->setName(of + tr("peak %1").arg(QString::fromStdString(formatBytes(s.timeline.peakBytes()))));
        peak->setMarkerSize(11);
        peak->setColor(runColor(s.colorIndex));
        peak->setBorderColor(Qt::black);
        const auto highest = std::max_element(points.begin(), points.end(),
                                              [](const QPointF &a, const QPointF &b) { return a.y() < b.y(); });
        peak->append(*highest);
        c->addSeries(peak);
        if (s.predictedPeak > 0)
            addLevel(of + tr("predicted %1").arg(QString::fromStdString(formatBytes(s.predictedPeak))),
                     double(s.predictedPeak), width, runColor(s.colorIndex));
        if (s.budget > 0)
            addLevel(of + tr("budget %1").arg(QString::fromStdString(formatBytes(s.budget))), double(s.budget), width,
                     QColor(200, 30, 30));
    }
    for (QAbstractSeries *series : c->series()) {
        series->attachAxis(m_x);
        series->attachAxis(m_y);
    }
    labelPhases(first);
    m_x->setRange(0, width);
    setAxisRange(m_y, 0, top, AxisUnit::Bytes);
}

double TimelineChart::plotWidth() const
{
    // The plot's width once laid out; before, the view's share of it.
    return chart()->plotArea().width() > 0 ? chart()->plotArea().width() : width() * 0.6;
}

QString TimelineChart::peakText(int i) const
{
    return m_peakTexts.value(i);
}

void TimelineChart::unlist(QAbstractSeries *series)
{
    chart()->legend()->markers(series).front()->setVisible(false);
    m_unlisted << series;
}

QStringList TimelineChart::legendNames() const
{
    QStringList names;
    for (QAbstractSeries *series : chart()->series())
        if (!m_unlisted.contains(series))
            names << series->name();
    return names;
}

void TimelineChart::addBands(const MemoryTimeline &timeline, double top)
{
    for (const Band band : {Band::Forward, Band::Loss, Band::Backward, Band::Optimizer}) {
        // One rectangle for each run of the band's phases: a few points, however many phases.
        auto *upper = new QLineSeries;
        bool any = false;
        for (size_t i = 0; i < timeline.phases.size(); ++i) {
            if (bandOf(timeline.phases[i].part) != band)
                continue;
            size_t end = i + 1;
            while (end < timeline.phases.size() && bandOf(timeline.phases[end].part) == band)
                ++end;
            for (const QPointF &corner :
                 {QPointF(double(i), 0), QPointF(double(i), top), QPointF(double(end), top), QPointF(double(end), 0)})
                upper->append(corner);
            any = true;
            i = end - 1;
        }
        if (!any) {
            delete upper;
            continue;
        }
        auto *area = new QAreaSeries(upper);
        area->setName(bandName(band));
        area->setColor(bandColor(band));
        area->setBorderColor(Qt::transparent);
        chart()->addSeries(area);
        unlist(area); // the axis names the bands
    }
}

void TimelineChart::addFloor(const MemoryTimeline &timeline)
{
    const double width = double(timeline.phases.size());
    double below = 0;
    int index = 0;
    for (const MemoryRole role : kPeakParts) {
        const auto found = timeline.statesBefore.find(role);
        if (found == timeline.statesBefore.end() || found->second <= 0)
            continue;
        auto *lower = new QLineSeries;
        auto *upper = new QLineSeries;
        lower->append(0, below);
        lower->append(width, below);
        below += double(found->second);
        upper->append(0, below);
        upper->append(width, below);
        auto *area = new QAreaSeries(upper, lower);
        area->setName(tr("%1 %2").arg(QString::fromLatin1(memoryRoleLabel(role)),
                                      QString::fromStdString(formatBytes(found->second))));
        area->setColor(roleColor(index++));
        area->setBorderColor(Qt::transparent);
        chart()->addSeries(area);
    }
}

void TimelineChart::addLevel(const QString &name, double bytes, double width, const QColor &color)
{
    auto *level = new QLineSeries;
    level->setName(name);
    QPen pen(color, 1.4, Qt::DashLine);
    level->setPen(pen);
    level->append(0, bytes);
    level->append(width, bytes);
    chart()->addSeries(level);
}

void TimelineChart::labelPhases(const MemoryTimeline &timeline)
{
    // One label per run of phases of a band: "forward" over the blocks' forwards, and so on.
    for (const QString &label : m_x->categoriesLabels())
        m_x->remove(label);
    m_x->setStartValue(0);
    for (size_t i = 0; i < timeline.phases.size(); ++i) {
        const Band band = bandOf(timeline.phases[i].part);
        if (i + 1 < timeline.phases.size() && bandOf(timeline.phases[i + 1].part) == band)
            continue;
        // A label names one range; a band that comes again (a second microbatch) gets spaces to differ.
        QString label = bandName(band);
        while (m_x->categoriesLabels().contains(label))
            label += QLatin1Char(' ');
        m_x->append(label, double(i + 1));
    }
}

} // namespace optlog
