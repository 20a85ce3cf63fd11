// SPDX-License-Identifier: MIT
// The monitor marks instabilities on the train loss, live and from the study file.
#include "core/config/config.h"
#include "core/store/store.h"
#include "tests/common/steadysteps.h"
#include "ui/monitorview.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace optlog;

namespace {

EngineEvent stepEvent(int64_t run, int64_t step, double loss)
{
    StepMetrics m;
    m.step = step;
    m.tokens = (step + 1) * 100;
    m.trainLoss = loss;
    m.tokensPerSecond = 1000;
    return {run, StepDone{m, std::nullopt, std::nullopt}};
}

} // namespace

class tst_MonitorView : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void liveInstabilitiesAreMarkedAtTheirStep()
    {
        MonitorView monitor;
        RunStarted started;
        started.totalSteps = 10;
        monitor.handleEvent({7, started});
        for (int64_t step = 0; step < 6; ++step) {
            monitor.handleEvent(stepEvent(7, step, step == 5 ? 9.0 : 3.0));
            if (step == 5)
                monitor.handleEvent({7, LogMessage{EventKind::LossSpike, "train loss 9 at step 5", 5, {}}});
        }
        monitor.handleEvent({7, LogMessage{EventKind::Warning, "not an instability", 5, {}}});
        monitor.handleEvent({8, LogMessage{EventKind::LossSpike, "another run's", 5, {}}});
        QCOMPARE(monitor.instabilityMarks(), qsizetype(1));
        QCOMPARE(monitor.trainPoints(), qsizetype(6));
    }

    void storedInstabilitiesAreMarkedAndNonFiniteLossesLeftOut()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("s.sqlite")).toStdString();
        {
            Store store(path);
            RunConfig config;
            const int64_t id = store.createRun("run", toToml(config));
            std::vector<StepMetrics> steps;
            for (int64_t s = 0; s < 5; ++s) {
                StepMetrics m;
                m.step = s;
                m.tokens = (s + 1) * 100;
                m.trainLoss = s == 4 ? NAN : 3.0;
                steps.push_back(m);
            }
            store.appendMetrics(id, steps);
            store.addEvent(id, EventKind::GradNormSpike, "a spike", 2);
            store.addEvent(id, EventKind::NonFinite, "training loss nan at step 4", 4);
            store.finishRun(id, Outcome::Diverged, 4, "training loss became nan");
        }
        const StudySnapshot study = loadStudySnapshot(path, {});
        MonitorView monitor;
        monitor.showRun(study.runs.front());
        QCOMPARE(monitor.trainPoints(), qsizetype(4));      // the NaN is not drawn
        QCOMPARE(monitor.instabilityMarks(), qsizetype(1)); // nor marked where there is no loss
    }

    // A run its own trainer reports through `optlog record` is followed from the study file, with
    // a mark that says so, and its progress against the steps the trainer planned.
    void aRecordedRunIsMarkedAsRecorded()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("r.sqlite")).toStdString();
        {
            Store store(path);
            const int64_t id = store.createRun("mine", "amp = 'bf16'\n");
            store.setEnvironment(id, R"({"recorder":"optlog Python module 1, train.py","planned_steps":60})");
            store.appendMetrics(id, testing::steadySteps(3, 100, 1000));
        }
        const StudySnapshot study = loadStudySnapshot(path, {});
        MonitorView monitor;
        monitor.showRun(study.runs.front());
        QCOMPARE(monitor.trainPoints(), qsizetype(3));
        // The header is redrawn at most once per redraw interval.
        QTRY_VERIFY2(monitor.headerText().contains(
                         QStringLiteral("recorded by optlog Python module 1, train.py, not launched here")),
                     qPrintable(monitor.headerText()));
        QVERIFY2(monitor.headerText().contains(QStringLiteral("step 3 of 60")), qPrintable(monitor.headerText()));
    }
};

QTEST_MAIN(tst_MonitorView)
#include "tst_monitorview.moc"
