// SPDX-License-Identifier: MIT
// The queue with real `optlog run` engine processes and a real study file.
#include "core/store/store.h"
#include "tests/common/testpaths.h"
#include "ui/compareview.h"
#include "ui/mainwindow.h"
#include "ui/monitorview.h"
#include "ui/runqueue.h"
#include "ui/runtablemodel.h"
#include "ui/studywatcher.h"

#include <QScopeGuard>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <csignal>

using namespace optlog;

namespace {

constexpr int kRunTimeoutMs = 120000;

PlannedRun smoke(const std::string &name, int steps = 40)
{
    PlannedRun run;
    run.name = name;
    run.preset = "smoke";
    run.overrides = {"data.corpus=generated", "train.steps=" + std::to_string(steps)};
    return run;
}

QString finishedOutcome(const QSignalSpy &spy, int i)
{
    return spy.at(i).at(1).toString();
}

// The step an engineEvent signal's event reports; -1 for other kinds.
int64_t stepOf(const QList<QVariant> &arguments)
{
    const EngineEvent event = qvariant_cast<EngineEvent>(arguments.at(0));
    const auto *step = std::get_if<StepDone>(&event.body);
    return step ? step->metrics.step : -1;
}

} // namespace

class tst_RunQueue : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        QStandardPaths::setTestModeEnabled(true); // QSettings of the main window stay out of ~/.config
    }

    void init() { m_study = m_dir.filePath(QStringLiteral("queue-%1.sqlite").arg(++m_counter)); }

    // The optlog binary the queue runs: $OPTLOG, else its old name $OPTLOG_ENGINE (one release
    // more), else the one beside the workbench.
    void theOptlogBinaryIsNamedByOptlogThenItsOldName()
    {
        const QByteArray savedNew = qgetenv("OPTLOG"), savedOld = qgetenv("OPTLOG_ENGINE");
        const auto restore = qScopeGuard([&] {
            for (const auto &[name, saved] : {std::pair{"OPTLOG", savedNew}, std::pair{"OPTLOG_ENGINE", savedOld}})
                saved.isNull() ? qunsetenv(name) : qputenv(name, saved);
        });
        qunsetenv("OPTLOG");
        qunsetenv("OPTLOG_ENGINE");
        QCOMPARE(RunQueue::defaultOptlogBinary(), QCoreApplication::applicationDirPath() + QStringLiteral("/optlog"));
        qputenv("OPTLOG_ENGINE", "/opt/old/optlog");
        QCOMPARE(RunQueue::defaultOptlogBinary(), QStringLiteral("/opt/old/optlog"));
        qputenv("OPTLOG", "/opt/new/optlog");
        QCOMPARE(RunQueue::defaultOptlogBinary(), QStringLiteral("/opt/new/optlog"));
    }

    void runsTwoInOrderAndStreamsThemToTheMonitor()
    {
        RunQueue queue(optlog::testing::optlogBinary());
        QVERIFY(queue.setStudy(m_study));
        MonitorView monitor;
        monitor.show(); // a hidden Monitor leaves its charts until it is shown
        monitor.setRedrawInterval(50);
        connect(&queue, &RunQueue::engineEvent, &monitor, &MonitorView::handleEvent);
        QSignalSpy finished(&queue, &RunQueue::runFinished);
        QSignalSpy events(&queue, &RunQueue::engineEvent);
        queue.enqueue(smoke("first"));
        queue.enqueue(smoke("second"));
        queue.start();
        QVERIFY(queue.isRunning());
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, kRunTimeoutMs);
        QCOMPARE(finished.at(0).at(0).toString(), QStringLiteral("first"));
        QCOMPARE(finished.at(1).at(0).toString(), QStringLiteral("second"));
        QCOMPARE(finishedOutcome(finished, 0), QStringLiteral("completed"));
        QCOMPARE(finishedOutcome(finished, 1), QStringLiteral("completed"));
        QVERIFY(queue.entries().isEmpty());
        QVERIFY(!queue.isActive()); // ran dry

        // The monitor received the second run's every step and validation, and drew them.
        QCOMPARE(monitor.trainPoints(), 40);
        QCOMPARE(monitor.validationPoints(), 40 / 10); // every eval_interval = 10 steps, the last at the end
        QTRY_VERIFY(monitor.redraws() > 1);
        bool sawMemory = false;
        for (const auto &arguments : events) {
            const EngineEvent event = qvariant_cast<EngineEvent>(arguments.at(0));
            const auto *step = std::get_if<StepDone>(&event.body);
            sawMemory = sawMemory || (step && step->peakBytes);
        }
        QVERIFY2(sawMemory, "step events carry the allocator's bytes");

        Store store(m_study.toStdString(), Store::Access::ReadOnly);
        const auto runs = store.runs();
        QCOMPARE(int(runs.size()), 2);
        QCOMPARE(runs[0].name, std::string("first"));
        QVERIFY(runs[0].createdAt <= runs[1].createdAt);
        QCOMPARE(int(store.metrics(runs[1].id).size()), 40);
    }

    void cancelsTheRunningRun()
    {
        RunQueue queue(optlog::testing::optlogBinary());
        QVERIFY(queue.setStudy(m_study));
        QSignalSpy finished(&queue, &RunQueue::runFinished);
        QSignalSpy events(&queue, &RunQueue::engineEvent);
        queue.enqueue(smoke("long", 100000));
        queue.start();
        QTRY_VERIFY_WITH_TIMEOUT(std::any_of(events.begin(), events.end(),
                                             [](const QList<QVariant> &e) { return stepOf(e) >= 0; }),
                                 kRunTimeoutMs);
        queue.cancelRunning();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
        QCOMPARE(finishedOutcome(finished, 0), QStringLiteral("cancelled"));
        Store store(m_study.toStdString(), Store::Access::ReadOnly);
        QCOMPARE(std::string(outcomeName(store.runs().at(0).outcome)), std::string("cancelled"));
    }

    // A run over two ranks is one queue entry: the queue starts rank 0, which starts rank 1; the
    // monitor gets rank 0's events, and Cancel (to rank 0 alone) stops both.
    void aRunOverRanksIsOneEntry()
    {
        RunQueue queue(optlog::testing::optlogBinary());
        QVERIFY(queue.setStudy(m_study));
        QSignalSpy finished(&queue, &RunQueue::runFinished);
        PlannedRun ranks = smoke("two ranks", 20);
        ranks.overrides.push_back("distributed.ranks=2");
        PlannedRun long2 = smoke("two ranks, cancelled", 100000);
        long2.overrides.push_back("distributed.ranks=2");
        queue.enqueue(ranks);
        queue.enqueue(long2);
        QSignalSpy events(&queue, &RunQueue::engineEvent);
        queue.start();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kRunTimeoutMs);
        QCOMPARE(finishedOutcome(finished, 0), QStringLiteral("completed"));
        events.clear();
        QTRY_VERIFY_WITH_TIMEOUT(std::any_of(events.begin(), events.end(),
                                             [](const QList<QVariant> &e) { return stepOf(e) >= 2; }),
                                 kRunTimeoutMs);
        queue.cancelRunning();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, 30000);
        QCOMPARE(finishedOutcome(finished, 1), QStringLiteral("cancelled"));
        Store store(m_study.toStdString(), Store::Access::ReadOnly);
        const auto runs = store.runs();
        QCOMPARE(int(runs.size()), 2); // one study row per run, whatever its ranks
        QCOMPARE(int(store.ranks(runs[0].id).size()), 2);
        QCOMPARE(store.ranks(runs[1].id).at(1).outcome, std::string("cancelled"));
    }

    void startPauseStartAgain()
    {
        RunQueue queue(optlog::testing::optlogBinary());
        QVERIFY(queue.setStudy(m_study));
        QSignalSpy finished(&queue, &RunQueue::runFinished);
        queue.enqueue(smoke("a", 20));
        queue.enqueue(smoke("b", 20));
        queue.start();
        queue.pause(); // "a" keeps running; "b" waits
        QVERIFY(queue.isRunning());
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kRunTimeoutMs);
        QTest::qWait(300);
        QVERIFY(!queue.isRunning());
        QCOMPARE(queue.entries().size(), 1);
        QCOMPARE(QueueEntry::stateName(queue.entries().front().state), QStringLiteral("queued"));

        queue.start();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, kRunTimeoutMs);
        QCOMPARE(finished.at(1).at(0).toString(), QStringLiteral("b"));
        QCOMPARE(finishedOutcome(finished, 1), QStringLiteral("completed"));

        // And once more from empty.
        queue.enqueue(smoke("c", 10));
        queue.start();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 3, kRunTimeoutMs);
        QCOMPARE(finishedOutcome(finished, 2), QStringLiteral("completed"));
    }

    void engineRefusalStaysInTheQueueWithItsReason()
    {
        RunQueue queue(optlog::testing::optlogBinary());
        QVERIFY(queue.setStudy(m_study));
        QSignalSpy finished(&queue, &RunQueue::runFinished);
        PlannedRun fp16 = smoke("fp16");
        fp16.overrides.push_back("precision.mode=\"autocast-fp16\"");
        queue.enqueue(fp16);
        queue.start();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kRunTimeoutMs);
        QCOMPARE(finishedOutcome(finished, 0), QStringLiteral("refused"));
        QCOMPARE(queue.entries().size(), 1);
        QCOMPARE(QueueEntry::stateName(queue.entries().front().state), QStringLiteral("failed"));
        QVERIFY2(queue.entries().front().message.contains(QStringLiteral("CUDA")),
                 qPrintable(queue.entries().front().message));
        // Refused before anything was written: no run, and here not even a study file.
        QVERIFY(!QFile::exists(m_study) || Store(m_study.toStdString(), Store::Access::ReadOnly).runs().empty());
    }

    void killedEngineLeavesTheRunCrashedAndTheWindowWorking()
    {
        MainWindow window(optlog::testing::optlogBinary());
        window.watcher()->setInterval(100);
        QVERIFY(window.openStudy(m_study));
        RunQueue *queue = window.queue();
        QSignalSpy finished(queue, &RunQueue::runFinished);
        QSignalSpy events(queue, &RunQueue::engineEvent);
        queue->enqueue(smoke("doomed", 100000));
        queue->enqueue(smoke("after", 20));
        queue->start();
        // Past the first batched write (about one second), so the study holds steps to keep.
        QTRY_VERIFY_WITH_TIMEOUT(std::count_if(events.begin(), events.end(),
                                               [](const QList<QVariant> &e) { return stepOf(e) >= 1; })
                                     > 0,
                                 kRunTimeoutMs);
        QTest::qWait(1500);
        const qint64 pid = queue->runningPid();
        QVERIFY(pid > 0);
        QCOMPARE(::kill(pid_t(pid), SIGKILL), 0);

        QTRY_VERIFY_WITH_TIMEOUT(finished.count() >= 1, 30000);
        QCOMPARE(finishedOutcome(finished, 0), QStringLiteral("crashed"));
        {
            Store store(m_study.toStdString(), Store::Access::ReadOnly);
            const RunRecord doomed = *store.findRun("doomed");
            QCOMPARE(std::string(outcomeName(doomed.outcome)), std::string("crashed"));
            QVERIFY2(!store.metrics(doomed.id).empty(), "the crashed run keeps the steps it recorded");
        }
        // The window carries on: the table shows the crash, and the next run completes.
        QTRY_COMPARE(window.runModel()->index(0, RunTableModel::State).data().toString().left(7),
                     QStringLiteral("crashed"));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, kRunTimeoutMs);
        QCOMPARE(finishedOutcome(finished, 1), QStringLiteral("completed"));
        QTRY_COMPARE(window.runModel()->index(1, RunTableModel::State).data().toString(), QStringLiteral("completed"));
    }

    // Destroying the window mid-run (a script's window, or the workbench's end) stops the engine
    // cleanly: the run is cancelled at its step, and the window's views, destroyed first, hear
    // nothing of it (they once did, and the process ended with SIGSEGV).
    void destroyingTheWindowMidRunCancelsTheRun()
    {
        {
            MainWindow window(optlog::testing::optlogBinary());
            QVERIFY(window.openStudy(m_study));
            QSignalSpy events(window.queue(), &RunQueue::engineEvent);
            window.queue()->enqueue(smoke("interrupted", 100000));
            window.queue()->start();
            QTRY_VERIFY_WITH_TIMEOUT(std::any_of(events.begin(), events.end(),
                                                 [](const QList<QVariant> &e) { return stepOf(e) >= 0; }),
                                     kRunTimeoutMs);
        }
        Store store(m_study.toStdString(), Store::Access::ReadOnly);
        QCOMPARE(std::string(outcomeName(store.findRun("interrupted")->outcome)), std::string("cancelled"));
    }

private:
    QTemporaryDir m_dir;
    QString m_study;
    int m_counter = 0;
};

QTEST_MAIN(tst_RunQueue)
#include "tst_runqueue.moc"
