// SPDX-License-Identifier: MIT
// The monitor marks instabilities on the train loss, live and from the study file.
#include "core/config/config.h"
#include "core/store/store.h"
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
        monitor.handleEvent({7, RunStarted{10, "started"}});
        for (int64_t step = 0; step < 6; ++step) {
            monitor.handleEvent(stepEvent(7, step, step == 5 ? 9.0 : 3.0));
            if (step == 5)
                monitor.handleEvent({7, LogMessage{EventKind::LossSpike, "train loss 9 at step 5", 5}});
        }
        monitor.handleEvent({7, LogMessage{EventKind::Warning, "not an instability", 5}});
        monitor.handleEvent({8, LogMessage{EventKind::LossSpike, "another run's", 5}});
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
};

QTEST_MAIN(tst_MonitorView)
#include "tst_monitorview.moc"
