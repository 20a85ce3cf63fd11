// SPDX-License-Identifier: MIT
// The Memory page: the timelines of runs the real engine trained, side by side on one scale or
// overlaid on one phase-aligned axis, each with its peak named by bytes and phase, the memory
// model's peak and the budget; the first step or the first measured.
#include "core/contract/format.h"
#include "core/memorymodel/memorymodel.h"
#include "tests/common/enginebinary.h"
#include "ui/memoryview.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace optlog;
using optlog::testing::runOptlog;

class tst_MemoryView : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void sideBySideEachRunShowsItsPeakOnOneScale();
    void overlaidTheRunsShareOnePhaseAlignedAxis();
    void theFirstStepIsShownWhenAskedAndARunWithoutOneIsNamed();

private:
    QList<RunSnapshotPtr> runs(const QStringList &names) const;
    int64_t measuredPeak(const RunSnapshotPtr &run) const;

    QTemporaryDir m_dir;
    StudySnapshot m_study;
};

void tst_MemoryView::initTestCase()
{
    QVERIFY(m_dir.isValid());
    const QString study = m_dir.filePath("memory.sqlite");
    const QStringList common = {"run",
                                "--db",
                                study,
                                "--preset",
                                "smoke",
                                "--set",
                                "data.corpus=generated",
                                "--set",
                                "train.steps=4",
                                "--set",
                                "memory.warmup_steps=2",
                                "--set",
                                "model.layers=3"};
    for (const QStringList &run : {QStringList{"--set", "name=fp32"},
                                   QStringList{"--set", "name=checkpointed", "--set", "memory.checkpoint_every=1"},
                                   QStringList{"--set", "name=budgeted", "--memory-budget", "64MiB"}}) {
        const auto r = runOptlog(common + run);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    }
    // A run recorded before timelines were: its rows, none of them.
    Store(study.toStdString()).createRun("older", "");
    m_study = loadStudySnapshot(study.toStdString(), {});
    QVERIFY2(m_study.error.empty(), m_study.error.c_str());
}

QList<RunSnapshotPtr> tst_MemoryView::runs(const QStringList &names) const
{
    QList<RunSnapshotPtr> out;
    for (const QString &name : names)
        for (const RunSnapshotPtr &run : m_study.runs)
            if (run->run().name == name.toStdString())
                out << run;
    return out;
}

int64_t tst_MemoryView::measuredPeak(const RunSnapshotPtr &run) const
{
    for (const MemoryRow &row : run->summary.memory)
        if (row.role == MemoryRole::Peak && row.source == MemorySource::Measured)
            return row.bytes;
    return -1;
}

void tst_MemoryView::sideBySideEachRunShowsItsPeakOnOneScale()
{
    MemoryView view;
    view.resize(1400, 700);
    view.show();
    view.setRuns(runs({"fp32", "checkpointed", "budgeted"}));
    QTRY_VERIFY(!view.drawing()); // a chart at a time
    QCOMPARE(view.charts().size(), 3);
    double scale = -1;
    for (int i = 0; i < 3; ++i) {
        const RunSnapshotPtr run = runs({"fp32", "checkpointed", "budgeted"})[i];
        const TimelineChart *chart = view.charts()[i];
        QCOMPARE(chart->timelineCount(), 1);
        // The steady step's peak is the run's measured peak, named with its phase.
        const QString peak = chart->peakText(0);
        QVERIFY2(peak.startsWith("peak " + QString::fromStdString(formatBytes(measuredPeak(run))) + " at "),
                 qPrintable(peak));
        QCOMPARE(chart->chart()->title(), QString::fromStdString(run->run().name));
        // The bands of the step's parts; its legend names the floor's roles, the peak, the
        // prediction and the budget with their bytes.
        QStringList bands;
        for (QAbstractSeries *series : chart->chart()->series())
            bands << series->name();
        const QStringList legend = chart->legendNames();
        QVERIFY2(bands.contains("forward") && bands.contains("backward") && bands.contains("optimizer")
                     && !legend.contains("forward"),
                 qPrintable(legend.join(" | ")));
        QVERIFY2(legend.contains("peak " + QString::fromStdString(formatBytes(measuredPeak(run)))),
                 qPrintable(legend.join(" | ")));
        QVERIFY2(legend.filter(QRegularExpression("^predicted [0-9.]+ [KM]iB$")).size() == 1,
                 qPrintable(legend.join(" | ")));
        QVERIFY2(legend.filter(QRegularExpression("^parameters ")).size() == 1, qPrintable(legend.join(" | ")));
        QCOMPARE(legend.filter(QRegularExpression("^budget 64.0 MiB$")).size(), i == 2 ? 1 : 0);
        // The summary names where the memory model puts the peak.
        const std::string predicted = estimateMemory(*run->summary.config).peakPhase.name();
        QVERIFY2(view.summaryText().contains(QString::fromStdString(run->run().name + ": step 2"))
                     && view.summaryText().contains(
                         QString::fromStdString("the memory model predicts its peak at " + predicted)),
                 qPrintable(view.summaryText()));
        if (scale < 0)
            scale = chart->highestFigure();
    }
    // Checkpointing flattens the hill: its peak is lower than FP32's.
    QVERIFY(measuredPeak(runs({"checkpointed"})[0]) < measuredPeak(runs({"fp32"})[0]));
    QVERIFY(view.summaryText().contains("the memory model predicts its peak at "));
}

void tst_MemoryView::overlaidTheRunsShareOnePhaseAlignedAxis()
{
    MemoryView view;
    view.resize(1400, 700);
    view.show();
    view.setArrangement(MemoryView::Arrangement::Overlaid);
    const QList<RunSnapshotPtr> shown = runs({"fp32", "checkpointed"});
    view.setRuns(shown);
    QTRY_VERIFY(!view.drawing()); // a chart at a time
    QCOMPARE(view.charts().size(), 1);
    const TimelineChart *chart = view.charts().front();
    QCOMPARE(chart->timelineCount(), 2);
    QVERIFY(chart->peakText(0).startsWith("fp32: peak "));
    QVERIFY(chart->peakText(1).startsWith("checkpointed: peak "));
    // The same phases for both: each timeline spans the axis from 0 to its phase count.
    const MemoryTimeline &a = shown[0]->summary.timelines.back(), &b = shown[1]->summary.timelines.back();
    QCOMPARE(a.phases.size(), b.phases.size());
    const QVector<QPointF> points = TimelineChart::phaseAlignedPoints(a);
    QCOMPARE(points.front().x(), 0.0);
    QCOMPARE(points.back().x(), double(a.phases.size()));
    QVERIFY(
        std::is_sorted(points.begin(), points.end(), [](const QPointF &p, const QPointF &q) { return p.x() < q.x(); }));
}

void tst_MemoryView::theFirstStepIsShownWhenAskedAndARunWithoutOneIsNamed()
{
    MemoryView view;
    view.resize(1400, 700);
    view.show();
    view.setStep(MemoryView::Step::First);
    view.setRuns(runs({"fp32", "older"}));
    QTRY_VERIFY(!view.drawing()); // a chart at a time
    QCOMPARE(view.charts().size(), 1);
    QVERIFY2(view.summaryText().contains("step 0, the first, where AdamW"), qPrintable(view.summaryText()));
    QVERIFY2(view.summaryText().contains("No timeline of this step: older"), qPrintable(view.summaryText()));
    // The first step's optimizer states appear within it: its peak is its own, not the run's.
    const MemoryTimeline &first = runs({"fp32"})[0]->summary.timelines.front();
    QVERIFY(first.firstStep);
    QVERIFY(view.charts().front()->peakText(0).startsWith(
        "peak " + QString::fromStdString(formatBytes(first.peakBytes())) + " at "));
    // A timeline from a stream may hold no phase at all: drawn beside another, it draws nothing.
    TimelineChart chart(QStringLiteral("empty beside whole"));
    TimelineChart::Shown empty;
    empty.label = QStringLiteral("empty");
    chart.setTimelines({TimelineChart::shownOf(runs({"fp32"})[0]->summary, first, 0), empty});
    QCOMPARE(chart.timelineCount(), 2);
    QVERIFY2(chart.peakText(1) == "empty: peak " + QString::fromStdString(formatBytes(0)) + " at no phase",
             qPrintable(chart.peakText(1)));
    view.setRuns({});
    QTRY_VERIFY(!view.drawing()); // a chart at a time
    QVERIFY(view.charts().isEmpty());
    QVERIFY(view.summaryText().contains("Select runs in the Runs list"));
}

QTEST_MAIN(tst_MemoryView)
#include "tst_memoryview.moc"
