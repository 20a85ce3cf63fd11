// SPDX-License-Identifier: MIT
// The runs table model over a real study file, as the engine writes it.
#include "core/config/config.h"
#include "core/store/clusterjobs.h"
#include "core/store/store.h"
#include "ui/runtablemodel.h"
#include "ui/studywatcher.h"

#include <QAbstractItemModelTester>
#include <QDir>
#include <QFileInfo>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

using namespace optlog;

namespace {

std::vector<StepMetrics> steps(int64_t from, int64_t count)
{
    std::vector<StepMetrics> rows;
    for (int64_t s = from; s < from + count; ++s) {
        StepMetrics m;
        m.step = s;
        m.tokens = (s + 1) * 1024;
        m.trainLoss = 5.0 - 0.01 * double(s);
        m.stepSeconds = 0.2;
        m.tokensPerSecond = 5120;
        rows.push_back(m);
    }
    return rows;
}

std::string configWithSteps(int64_t steps)
{
    RunConfig config;
    config.train.steps = steps;
    return toToml(config);
}

} // namespace

class tst_RunTableModel : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init()
    {
        QVERIFY(m_dir.isValid());
        m_path = m_dir.filePath(QStringLiteral("study-%1.sqlite").arg(++m_counter));
    }

    void passesTheModelTesterThroughAStudysLife()
    {
        RunTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        Store store(m_path.toStdString());

        model.setRows(runRows(loadStudySnapshot(m_path.toStdString(), {}), {}));
        QCOMPARE(model.rowCount(), 0);

        const int64_t first = store.createRun("fp32", configWithSteps(100));
        QueueEntry queued;
        queued.id = 7;
        queued.run.name = "bf16";
        queued.state = QueueEntry::State::Queued;
        model.setRows(runRows(loadStudySnapshot(m_path.toStdString(), {}), {queued}));
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.index(0, RunTableModel::Name).data().toString(), QStringLiteral("fp32"));
        QCOMPARE(model.index(0, RunTableModel::State).data().toString(), QStringLiteral("running"));
        QCOMPARE(model.index(1, RunTableModel::State).data().toString(), QStringLiteral("queued"));

        // The engine writes 40 of 100 steps: the row changes in place, with progress and an ETA.
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        store.appendMetrics(first, steps(0, 40));
        model.setRows(runRows(loadStudySnapshot(m_path.toStdString(), {}), {queued}));
        QCOMPARE(changed.count(), 1);
        QCOMPARE(inserted.count(), 0);
        QCOMPARE(model.index(0, RunTableModel::Progress).data().toString(), QStringLiteral("40 / 100"));
        QCOMPARE(model.index(0, RunTableModel::Progress).data(RunTableModel::ProgressRole).toDouble(), 0.4);
        QCOMPARE(model.index(0, RunTableModel::Eta).data().toString(), QStringLiteral("12 s")); // 60 steps x 0.2 s

        // The queued run starts: its queue row gives way to the study's row, in one insert and one removal.
        store.finishRun(first, Outcome::Completed, 99, "");
        const int64_t second = store.createRun("bf16", configWithSteps(100));
        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
        model.setRows(runRows(loadStudySnapshot(m_path.toStdString(), {}), {}));
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(removed.count(), 1);
        QCOMPARE(model.index(0, RunTableModel::State).data().toString(), QStringLiteral("completed"));
        QCOMPARE(model.index(1, RunTableModel::Name).data(RunTableModel::RunIdRole).toLongLong(), second);
        QCOMPARE(model.index(0, RunTableModel::Eta).data().toString(), QString());

        // A failed run shows its message beside the outcome.
        store.finishRun(second, Outcome::Diverged, 12, "loss is NaN at step 12");
        model.setRows(runRows(loadStudySnapshot(m_path.toStdString(), {}), {}));
        QCOMPARE(model.index(1, RunTableModel::State).data().toString(),
                 QStringLiteral("diverged: loss is NaN at step 12"));
    }

    void watcherSeesWhatTheEngineWrites()
    {
        Store store(m_path.toStdString());
        const int64_t run = store.createRun("fp32", configWithSteps(50));
        StudyWatcher watcher;
        watcher.setInterval(100);
        RunTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        connect(&watcher, &StudyWatcher::snapshotChanged, &model,
                [&] { model.setRows(runRows(watcher.snapshot(), {})); });
        watcher.setPath(m_path);
        QTRY_COMPARE(model.rowCount(), 1);

        store.appendMetrics(run, steps(0, 10));
        QTRY_COMPARE(model.index(0, RunTableModel::Progress).data().toString(), QStringLiteral("10 / 50"));
        store.appendMetrics(run, steps(10, 40));
        store.finishRun(run, Outcome::Completed, 49, "");
        QTRY_COMPARE(model.index(0, RunTableModel::State).data().toString(), QStringLiteral("completed"));

        // A finished run is read once and then reused: the snapshot keeps the same object.
        const RunSnapshotPtr before = watcher.snapshot().find(run);
        QSignalSpy spy(&watcher, &StudyWatcher::snapshotChanged);
        watcher.refresh();
        QTRY_VERIFY(spy.count() >= 1);
        QCOMPARE(watcher.snapshot().find(run).get(), before.get());
    }

    void runsOnAClusterShowWithTheirTaskStateAndTheirShardsProgress()
    {
        // A study that handed three runs to Slurm as job 7: task 0 trains into its shard, task 1
        // waits in the queue (no shard yet), task 2 failed before it created its run.
        Store study(m_path.toStdString());
        const std::string shards = QFileInfo(m_path).fileName().toStdString() + ".shards/";
        QVERIFY(QDir().mkpath(m_path + ".shards"));
        Store shard(study.absolutePath(shards + "7-0.sqlite"));
        const int64_t running = shard.createRun("long", configWithSteps(100));
        shard.appendMetrics(running, steps(0, 30));
        ClusterJob job{"7", "slurm", "plan", "script", "2026-12-03T06:00:00Z", {}};
        const std::vector<std::pair<std::string, std::string>> tasks = {{"long", "RUNNING"},
                                                                        {"short", "PENDING"},
                                                                        {"lost", "FAILED"}};
        for (size_t i = 0; i < tasks.size(); ++i)
            job.tasks.push_back({"7", int64_t(i), tasks[i].first, shards + "7-" + std::to_string(i) + ".sqlite",
                                 tasks[i].second, "", 0, ""});
        addClusterJob(study, job);
        const QString seenAt = QString::fromStdString(clusterJobs(study).at(0).tasks.at(0).stateAt);

        // Where Slurm cannot be asked, each task shows the state last stored, marked so.
        RunTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setRows(runRows(loadStudySnapshot(m_path.toStdString(), {}), {}));
        QCOMPARE(model.rowCount(), 2); // the task that ended with no run has nothing to show or gather
        QCOMPARE(model.index(0, RunTableModel::Name).data().toString(), QStringLiteral("long"));
        QCOMPARE(model.index(0, RunTableModel::State).data().toString(),
                 QStringLiteral("Slurm 7_0 · running (last seen %1)").arg(seenAt));
        QCOMPARE(model.index(0, RunTableModel::Progress).data().toString(), QStringLiteral("30 / 100"));
        QCOMPARE(model.index(0, RunTableModel::Eta).data().toString(), QStringLiteral("14 s")); // 70 steps x 0.2 s
        QCOMPARE(model.index(0, RunTableModel::Name).data(RunTableModel::RunIdRole).toLongLong(), 0);
        QCOMPARE(model.index(0, RunTableModel::Name).data(RunTableModel::ClusterTaskRole).toString(),
                 QStringLiteral("7_0"));
        QVERIFY(!(model.flags(model.index(0, 0)) & Qt::ItemIsDragEnabled)); // not the study's run yet
        QCOMPARE(model.index(1, RunTableModel::State).data().toString(),
                 QStringLiteral("Slurm 7_1 · queued (last seen %1)").arg(seenAt));
        QCOMPARE(model.index(1, RunTableModel::Progress).data().toString(), QString());

        // The scheduler's answer replaces what was stored; a task that ended says how its run did.
        shard.finishRun(running, Outcome::Completed, 29, "");
        const TaskStatesOf slurmSays = [](const std::string &jobId, int64_t count) {
            return jobId == "7" && count == 3 ? std::map<int64_t, std::string>{{0, "COMPLETED"}, {1, "RUNNING"}}
                                              : std::map<int64_t, std::string>{};
        };
        model.setRows(runRows(loadStudySnapshot(m_path.toStdString(), {}, slurmSays), {}));
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.index(0, RunTableModel::State).data().toString(),
                 QStringLiteral("Slurm 7_0 · done · run completed, not gathered"));
        QCOMPARE(model.index(0, RunTableModel::Eta).data().toString(), QString());
        QCOMPARE(model.index(1, RunTableModel::State).data().toString(), QStringLiteral("Slurm 7_1 · running"));

        // The filter applies to them as to the study's runs.
        model.setRows(runRows(loadStudySnapshot(m_path.toStdString(), {}), {}, RunFilter::parse("name:short")));
        QCOMPARE(model.rowCount(), 1);
        QCOMPARE(model.index(0, RunTableModel::Name).data().toString(), QStringLiteral("short"));

        // Once gathered, the run is the study's: its cluster row goes.
        gatherClusterRun(study, shard, running, "7", 0);
        const StudySnapshot gathered = loadStudySnapshot(m_path.toStdString(), {}, slurmSays);
        QCOMPARE(gathered.runs.size(), size_t(1));
        QCOMPARE(gathered.clusterTasks.size(), size_t(1));
        QVERIFY(gathered.findClusterTask("7_1") && !gathered.findClusterTask("7_0"));
    }

    void aFileThatIsNotAStudyIsReportedNotThrown()
    {
        QFile junk(m_path);
        QVERIFY(junk.open(QIODevice::WriteOnly));
        junk.write("not a database");
        junk.close();
        const StudySnapshot snapshot = loadStudySnapshot(m_path.toStdString(), {});
        QVERIFY(snapshot.runs.empty());
        QVERIFY2(!snapshot.error.empty(), "the error names what is wrong");
    }

private:
    QTemporaryDir m_dir;
    QString m_path;
    int m_counter = 0;
};

QTEST_MAIN(tst_RunTableModel)
#include "tst_runtablemodel.moc"
