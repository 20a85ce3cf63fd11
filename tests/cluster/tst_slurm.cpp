// SPDX-License-Identifier: MIT
// A study on a real Slurm: a one-node cluster on the loopback (tests/cluster/onenode.sh: munged,
// slurmctld and slurmd, started in a scratch folder), the real `optlog` submitting a job array with
// sbatch, its tasks training into shards, gathered into the study. Skipped, saying why, where the
// daemons cannot start (no root, Slurm not installed); never passed without them. The workbench
// shows the same tasks, follows one's shard in its Monitor and cancels them, in a real window
// (offscreen).
#include "core/store/clusterjobs.h"
#include "core/store/store.h"
#include "tests/common/enginebinary.h"
#include "tests/common/files.h"
#include "tests/common/scenariosizes.h"
#include "tests/common/testpaths.h"
#ifdef OPTLOG_TEST_WORKBENCH // the build without the workbench tests the CLI's side alone
#include "core/config/studyplan.h"
#include "ui/mainwindow.h"
#include "ui/monitorview.h"
#include "ui/runplacechooser.h"
#include "ui/runqueue.h"
#include "ui/runsview.h"
#include "ui/runtablemodel.h"

#include <QSignalSpy>
#include <QStatusBar>
#include <QTableView>
#endif

#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>

using namespace optlog;
using optlog::testing::Result;
using optlog::testing::runOptlog;
using optlog::testing::waitForSteps;
using optlog::testing::writtenFile;
using namespace optlog::testing::scenario;

namespace {

// A plan of smoke runs, each as a [[run]] with its own overrides.
QByteArray planOf(const QString &name, const QList<QPair<QString, QStringList>> &runs)
{
    QByteArray plan = "name = \"" + name.toUtf8() + "\"\nbaseline = \"" + runs.front().first.toUtf8()
                      + "\"\ntolerance = 0.02\n";
    for (const auto &[run, overrides] : runs) {
        plan += "\n[[run]]\nname = \"" + run.toUtf8() + "\"\npreset = \"smoke\"\noverrides = [";
        QStringList quoted = {"\"data.corpus=generated\""};
        for (QString o : overrides)
            quoted << "\"" + o.replace("\"", "\\\"") + "\"";
        plan += quoted.join(", ").toUtf8() + "]\n";
    }
    return plan;
}

// The job id `optlog study --scheduler slurm` printed ("... as job 12 ...").
QString jobIdIn(const QString &err)
{
    return QRegularExpression("as job (\\d+)").match(err).captured(1);
}

// Slurm's state of each task of `job`, as squeue sees it: "COMPLETED RUNNING".
QStringList taskStates(const QString &job)
{
    QProcess squeue;
    squeue.start("squeue", {"-h", "-r", "--states=all", "-j", job, "-o", "%T"});
    squeue.waitForFinished(10000);
    return QString::fromUtf8(squeue.readAllStandardOutput()).split('\n', Qt::SkipEmptyParts);
}

bool waitForTasksToEnd(const QString &job, int tasks, int timeoutMs = 120000)
{
    QElapsedTimer timer;
    timer.start();
    while (timer.elapsed() < timeoutMs) {
        const QStringList states = taskStates(job);
        if (states.size() == tasks && !states.contains("PENDING") && !states.contains("RUNNING")
            && !states.contains("COMPLETING"))
            return true;
        QThread::msleep(250);
    }
    return false;
}

struct RunRows
{
    std::vector<double> trainLosses, validationLosses;
    std::vector<MemoryRow> memory; // the roles in tensor bytes; the process's RSS is left out
};

std::map<std::string, RunRows> rowsByName(const QString &study)
{
    const Store store(study.toStdString(), Store::Access::ReadOnly);
    std::map<std::string, RunRows> rows;
    for (const RunRecord &run : store.runs()) {
        RunRows &r = rows[run.name];
        for (const StepMetrics &m : store.metrics(run.id))
            r.trainLosses.push_back(m.trainLoss);
        for (const ValidationPoint &v : store.validation(run.id))
            r.validationLosses.push_back(v.loss);
        for (const MemoryRow &m : store.memory(run.id))
            if (m.role != MemoryRole::PeakRss)
                r.memory.push_back(m);
    }
    return rows;
}

} // namespace

class tst_Slurm : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void aStudyOnSlurmEqualsTheSameStudyRunHere();
    void aStudyNamedLikeShellCodeRunsNothingButItsTasks();
    void aCancelledTaskEndsItsRunCancelledAndTheRestAreGathered();
    void aTruncatedShardIsRefusedWithItsPathAndTheOthersGathered();
#ifdef OPTLOG_TEST_WORKBENCH
    void theWorkbenchShowsTheTasksFollowsARunningShardAndCancels();
    void theWorkbenchHandsItsQueueToSlurm();
#endif
    void aNodeThatDiesMidRunLeavesItsRunCrashedAndResumable();
    void withoutSlurmTheSchedulerIsRefused();
    void srunRanksTrainAsTheRanksOptlogStarts();
    void aRankZeroWhosePeerNeverComesEndsItsTaskWithTheRunCrashed();
    void aStoppedRankThatWaitsForRankZeroEndsCancelled();
    void aRankWhoseRankZeroNeverComesGivesUpAfterTheTimeout();

private:
    // Started first, checked last: a rank that waits the default distributed.timeout (60 s) in
    // vain, beside the other tests. bash times it: the window's event loop may take its end late.
    QProcess m_abandonedRank;
    QTemporaryDir m_dir;
    QString m_cluster;
    QString m_skip; // why Slurm cannot run here; empty when it runs
};

// A joining rank's command line with nowhere to join: nothing listens on port 1.
const QStringList kRankWithoutRankZero = {"run", "--rendezvous", "127.0.0.1:1", "--rank", "1", "--world-size", "2"};

void tst_Slurm::initTestCase()
{
    QVERIFY(m_dir.isValid());
    QStandardPaths::setTestModeEnabled(true); // the workbench's settings, not the user's
    m_abandonedRank.start("bash", QStringList{"-c",
                                              "SECONDS=0; \"$@\"; status=$?; echo \"waited $SECONDS s\" >&2; "
                                              "exit $status",
                                              "bash", optlog::testing::optlogBinary()}
                                      + kRankWithoutRankZero);
    m_cluster = m_dir.filePath("cluster");
    QProcess start;
    start.start("bash", {optlog::testing::sourcePath(QStringLiteral("tests/cluster/onenode.sh")), "start", m_cluster});
    QVERIFY(start.waitForFinished(60000));
    const QString out = QString::fromUtf8(start.readAllStandardOutput());
    const QString err = QString::fromUtf8(start.readAllStandardError());
    if (start.exitCode() == 77) {
        m_skip = err.trimmed();
        return;
    }
    QVERIFY2(start.exitCode() == 0, qPrintable(err));
    qputenv("SLURM_CONF", (m_cluster + "/slurm.conf").toUtf8());
}

void tst_Slurm::cleanupTestCase()
{
    QProcess::execute("bash",
                      {optlog::testing::sourcePath(QStringLiteral("tests/cluster/onenode.sh")), "stop", m_cluster});
}

void tst_Slurm::aStudyOnSlurmEqualsTheSameStudyRunHere()
{
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    const QString plan = writtenFile(m_dir, "four.toml",
                                     planOf("four", {{"fp32", {}},
                                                     {"accum2", {"train.microbatch=2", "train.accumulation=2"}},
                                                     {"bf16", {"precision.mode=\"autocast-bf16\""}},
                                                     {"ckpt", {"memory.checkpoint_every=1"}}}));
    const QString onSlurm = m_dir.filePath("slurm.sqlite"), here = m_dir.filePath("here.sqlite");
    const Result submitted = runOptlog({"study", plan, "--db", onSlurm, "--scheduler", "slurm", "--max-parallel", "2",
                                        "--wait"},
                                       300000);
    QVERIFY2(submitted.exitCode == 0, qPrintable(submitted.err));
    QVERIFY2(submitted.err.contains("submitted 4 runs to Slurm as job") && submitted.err.contains("at most 2 at once"),
             qPrintable(submitted.err));
    QCOMPARE(submitted.err.count("optlog study: gathered "), 4);
    QVERIFY2(submitted.out.contains("accum2"), qPrintable(submitted.out)); // the comparison follows
    const QString job = jobIdIn(submitted.err);
    QCOMPARE(taskStates(job), QStringList({"COMPLETED", "COMPLETED", "COMPLETED", "COMPLETED"}));

    // The study records the job, its plan and each task, every run gathered once.
    {
        const Store store(onSlurm.toStdString(), Store::Access::ReadOnly);
        const std::vector<ClusterJob> jobs = clusterJobs(store);
        QCOMPARE(jobs.size(), size_t(1));
        QCOMPARE(QString::fromStdString(jobs[0].jobId), job);
        QVERIFY(QString::fromStdString(jobs[0].plan).contains("name = \"four\""));
        QVERIFY(QString::fromStdString(jobs[0].script).contains("#SBATCH"));
        QCOMPARE(jobs[0].tasks.size(), size_t(4));
        for (const ClusterTask &task : jobs[0].tasks) {
            QCOMPARE(QString::fromStdString(task.state), QString("COMPLETED"));
            QVERIFY(task.gatheredRunId > 0);
            QVERIFY(std::filesystem::exists(store.absolutePath(task.shard)));
        }
        QCOMPARE(store.runs().size(), size_t(4));
    }
    // Gathering again copies nothing: a run is gathered once.
    const Result again = runOptlog({"gather", onSlurm});
    QVERIFY2(again.exitCode == 0 && again.err.contains("0 runs gathered"), qPrintable(again.err));
    // Submitting the plan again submits nothing: every run is done.
    const Result resubmitted = runOptlog({"study", plan, "--db", onSlurm, "--scheduler", "slurm"});
    QVERIFY2(resubmitted.exitCode == 0 && resubmitted.err.contains("nothing to submit"), qPrintable(resubmitted.err));

    // The same plan trained here, one run after another: the same losses bit for bit on this CPU,
    // and the same bytes in every memory role.
    const Result local = runOptlog({"study", plan, "--db", here}, 300000);
    QVERIFY2(local.exitCode == 0, qPrintable(local.err));
    const auto slurmRows = rowsByName(onSlurm), hereRows = rowsByName(here);
    QCOMPARE(slurmRows.size(), size_t(4));
    for (const auto &[name, rows] : hereRows) {
        const RunRows &other = slurmRows.at(name);
        QVERIFY2(rows.trainLosses.size() == 40 && rows.trainLosses == other.trainLosses, name.c_str());
        QVERIFY2(!rows.validationLosses.empty() && rows.validationLosses == other.validationLosses, name.c_str());
        QCOMPARE(rows.memory.size(), other.memory.size());
        for (size_t i = 0; i < rows.memory.size(); ++i) {
            QVERIFY(rows.memory[i].role == other.memory[i].role);
            QCOMPARE(rows.memory[i].bytes, other.memory[i].bytes);
        }
    }
}

void tst_Slurm::aStudyNamedLikeShellCodeRunsNothingButItsTasks()
{
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    // A study's path and its plan's name as someone may give them: a command substitution, a
    // backquoted command, a double quote and spaces. The batch script holds them as literals.
    const QString folder = m_dir.filePath("named like code 100%A"); // % is sbatch's pattern character
    QVERIFY(QDir().mkpath(folder));
    const QStringList markers = {"pwned-subst", "pwned-tick", "pwned-plan"};
    const QString study = folder + "/a \"study\" $(touch pwned-subst) `touch pwned-tick`.sqlite";
    const QString plan = writtenFile(m_dir, "named.toml",
                                     planOf("$(touch pwned-plan)",
                                            {{"fp32", {}}, {"accum2", {"train.accumulation=2"}}}));
    const auto markersMade = [&] {
        QStringList made;
        for (const QString &where : {folder, study + ".shards", QDir::currentPath()})
            for (const QString &marker : markers)
                if (QFile::exists(where + "/" + marker))
                    made << where + "/" + marker;
        return made;
    };
    const Result submitted = runOptlog({"study", plan, "--db", study, "--scheduler", "slurm", "--wait"}, 300000);
    QVERIFY2(submitted.exitCode == 0, qPrintable(submitted.err));
    QCOMPARE(submitted.err.count("optlog study: gathered "), 2);
    QVERIFY2(markersMade().isEmpty(), qPrintable(markersMade().join(", ")));
    {
        const Store store(study.toStdString(), Store::Access::ReadOnly);
        QCOMPARE(store.runs().size(), size_t(2));
        // Each task's log is where its pattern says: in the study's own folder, its % kept.
        QCOMPARE(QDir(study + ".shards").entryList({"*.log"}).size(), 2);
    }
    // The commands printed for a person to paste name the study as one word of a shell's.
    const Result again = runOptlog({"study", plan, "--db", study, "--scheduler", "slurm"});
    QVERIFY2(again.exitCode == 0, qPrintable(again.err));
    const QRegularExpression printed("`(optlog gather [^\\n]*)` collects");
    const QRegularExpressionMatch command = printed.match(again.err);
    QVERIFY2(command.hasMatch(), qPrintable(again.err));
    QProcess shell;
    shell.start("bash", {"-c", "optlog() { printf '%s\\n' \"$@\"; }; " + command.captured(1)});
    QVERIFY(shell.waitForFinished(30000));
    QCOMPARE(QString::fromUtf8(shell.readAllStandardOutput()), "gather\n" + study + "\n");
    QVERIFY2(markersMade().isEmpty(), qPrintable(markersMade().join(", ")));
}

void tst_Slurm::aCancelledTaskEndsItsRunCancelledAndTheRestAreGathered()
{
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    const QString plan = writtenFile(m_dir, "cancel.toml",
                                     planOf("cancel", {{"short", {}},
                                                       {"long",
                                                        {"train.steps=" + QString::number(kSlurmCancelledSteps),
                                                         "train.checkpoint_interval=50"}}}));
    const QString study = m_dir.filePath("cancel.sqlite");
    const Result submitted = runOptlog({"study", plan, "--db", study, "--scheduler", "slurm"});
    QVERIFY2(submitted.exitCode == 0, qPrintable(submitted.err));
    const QString job = jobIdIn(submitted.err);
    QVERIFY(waitForSteps(study + ".shards/" + job + "-1.sqlite", 60, 120000));
    const Result cancelled = runOptlog({"cancel", study, "long"});
    QVERIFY2(cancelled.exitCode == 0 && cancelled.err.contains("cancelled long (job " + job + " task 1"),
             qPrintable(cancelled.err));
    QVERIFY(waitForTasksToEnd(job, 2));
    const Result gathered = runOptlog({"gather", study});
    QVERIFY2(gathered.exitCode == 0 && gathered.err.contains("2 runs gathered"), qPrintable(gathered.err));
    int64_t stoppedAt = 0;
    {
        const Store store(study.toStdString(), Store::Access::ReadOnly);
        QCOMPARE(std::string(outcomeName(store.findRun("short")->outcome)), std::string("completed"));
        const RunRecord stopped = *store.findRun("long");
        QCOMPARE(std::string(outcomeName(stopped.outcome)), std::string("cancelled"));
        QCOMPARE(stopped.outcomeStep, store.metrics(stopped.id).back().step); // every step it took was kept
        QCOMPARE(QString::fromStdString(clusterJobs(store).at(0).tasks.at(1).state), QString("CANCELLED"));
        stoppedAt = stopped.outcomeStep;
    }

    // The plan again: the cancelled run goes on from its checkpoint in its shard, and its
    // completed run replaces the cancelled copy; the completed one is not submitted again.
    const Result resumed = runOptlog({"study", plan, "--db", study, "--scheduler", "slurm", "--wait"}, 300000);
    QVERIFY2(resumed.exitCode == 0 && resumed.err.contains("submitted 1 run to Slurm"), qPrintable(resumed.err));
    const Store store(study.toStdString(), Store::Access::ReadOnly);
    const std::vector<ClusterJob> jobs = clusterJobs(store);
    QCOMPARE(jobs.size(), size_t(2));
    QVERIFY(QString::fromStdString(jobs[1].script).contains("'--resume'"));
    QCOMPARE(jobs[1].tasks.at(0).shard, jobs[0].tasks.at(1).shard);
    QCOMPARE(store.runs().size(), size_t(2));
    const RunRecord finished = *store.findRun("long");
    QCOMPARE(std::string(outcomeName(finished.outcome)), std::string("completed"));
    const std::vector<StepMetrics> steps = store.metrics(finished.id);
    QCOMPARE(steps.size(), size_t(kSlurmCancelledSteps));
    QVERIFY(store.events(finished.id).size() > 0);
    QVERIFY(stoppedAt < 2999);
}

void tst_Slurm::aTruncatedShardIsRefusedWithItsPathAndTheOthersGathered()
{
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    const QString plan = writtenFile(m_dir, "truncated.toml", planOf("truncated", {{"a", {}}, {"b", {}}}));
    const QString study = m_dir.filePath("truncated.sqlite");
    const Result submitted = runOptlog({"study", plan, "--db", study, "--scheduler", "slurm"});
    QVERIFY2(submitted.exitCode == 0, qPrintable(submitted.err));
    const QString job = jobIdIn(submitted.err);
    QVERIFY(waitForTasksToEnd(job, 2));
    const QString shard = study + ".shards/" + job + "-0.sqlite";
    std::filesystem::resize_file(shard.toStdString(), 8192);
    const Result gathered = runOptlog({"gather", study});
    QCOMPARE(gathered.exitCode, 2);
    QVERIFY2(gathered.err.contains("refused shard " + shard) && gathered.err.contains("gathered b (job " + job),
             qPrintable(gathered.err));
    const Store store(study.toStdString(), Store::Access::ReadOnly);
    QCOMPARE(store.runs().size(), size_t(1));
    QCOMPARE(store.runs().front().name, std::string("b"));
}

#ifdef OPTLOG_TEST_WORKBENCH
void tst_Slurm::theWorkbenchShowsTheTasksFollowsARunningShardAndCancels()
{
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    // One task at a time: "long" trains while "waits" is queued behind it. Long enough that the
    // cancel ends it on any machine: 3000 steps ended before it on an AMD EPYC under ctest -j2.
    const QString plan = writtenFile(m_dir, "workbench.toml",
                                     planOf("workbench",
                                            {{"long", {"train.steps=100000", "train.checkpoint_interval=50"}},
                                             {"waits", {}}}));
    const QString study = m_dir.filePath("workbench.sqlite");
    const Result submitted = runOptlog({"study", plan, "--db", study, "--scheduler", "slurm", "--max-parallel", "1"});
    QVERIFY2(submitted.exitCode == 0, qPrintable(submitted.err));
    const QString job = jobIdIn(submitted.err);

    MainWindow window(optlog::testing::optlogBinary());
    QVERIFY(window.openStudy(study));
    window.show();
    RunTableModel *model = window.runModel();
    const auto stateOf = [model](int row) {
        return row < model->rowCount() ? model->index(row, RunTableModel::State).data().toString() : QString();
    };
    // The runs list shows each task with Slurm's state and job, as squeue says.
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(0), "Slurm " + job + "_0 · running", 60000);
    QCOMPARE(model->rowCount(), 2);
    QCOMPARE(model->index(0, RunTableModel::Name).data().toString(), QStringLiteral("long"));
    QCOMPARE(stateOf(1), "Slurm " + job + "_1 · queued");

    // Selected, the running task's run is followed in the Monitor from its shard, step after step.
    window.runsView()->table()->setCurrentIndex(model->index(0, 0));
    window.showPage(1);
    MonitorView *monitor = window.monitor();
    QTRY_VERIFY_WITH_TIMEOUT(monitor->trainPoints() >= 20, 60000);
    QTRY_VERIFY2(monitor->headerText().contains("<b>long</b> (on Slurm as job " + job + "_0, from its shard)"),
                 qPrintable(monitor->headerText()));
    const qsizetype seen = monitor->trainPoints();
    QTRY_VERIFY_WITH_TIMEOUT(monitor->trainPoints() > seen + 10, 30000);
    QVERIFY(window.cancelClusterAction()->isEnabled());

    // Cancel, from the Run menu: scancel of both tasks; the running run ends cancelled in its shard.
    window.runsView()->table()->selectAll();
    window.cancelClusterAction()->trigger();
    const QString cancelled = "Slurm " + job + "_0 · cancelled · run cancelled, not gathered: stopped by a signal";
    QTRY_VERIFY2_WITH_TIMEOUT(stateOf(0).startsWith(cancelled), qPrintable("the state is: " + stateOf(0)), 60000);
    QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), 1, 30000); // the queued task never made a run
    QCOMPARE(taskStates(job), QStringList({"CANCELLED", "CANCELLED"}));

    // Gather, from the Run menu: the cancelled run becomes the study's, with every step it took.
    window.gatherAction()->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(stateOf(0).startsWith("cancelled: stopped by a signal"), 30000);
    QCOMPARE(model->rowCount(), 1);
    QVERIFY(model->index(0, 0).data(RunTableModel::RunIdRole).toLongLong() > 0);
    const Store store(study.toStdString(), Store::Access::ReadOnly);
    const RunRecord gathered = *store.findRun("long");
    QCOMPARE(std::string(outcomeName(gathered.outcome)), std::string("cancelled"));
    QVERIFY(store.metrics(gathered.id).size() > size_t(seen));
}

// "Run on: A Slurm cluster": Start hands the whole queue to Slurm as one job array, a run made
// from a stored run among it, and the tasks train the configs the queue held.
void tst_Slurm::theWorkbenchHandsItsQueueToSlurm()
{
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    const QString study = m_dir.filePath("queue.sqlite");
    const Result stored = runOptlog({"run", "--db", study, "--preset", "smoke", "--set", "data.corpus=generated",
                                     "--set", "train.steps=6", "--set", "model.layers=1", "--set", "name=stored"});
    QVERIFY2(stored.exitCode == 0, qPrintable(stored.err));

    MainWindow window(optlog::testing::optlogBinary());
    QVERIFY(window.openStudy(study));
    window.show();
    auto *place = window.findChild<RunPlaceChooser *>();
    QVERIFY(place);
    QVERIFY(place->choose(RunPlace::onSlurm())); // offered: sbatch is on the PATH
    auto *queue = window.findChild<RunQueue *>();
    QVERIFY(queue);
    PlannedRun fresh;
    fresh.name = "fresh";
    fresh.preset = "smoke";
    fresh.overrides = {"data.corpus=generated", "train.steps=5"};
    PlannedRun derived;
    derived.name = "from stored";
    derived.from = study.toStdString() + ":1";
    derived.fromToml = Store(study.toStdString(), Store::Access::ReadOnly).requireRun(1).configToml;
    derived.overrides = {"train.steps=7"};
    // Slurm's commands gone from the PATH: refused, the run left in the queue, failed, saying why.
    const QByteArray path = qgetenv("PATH");
    qputenv("PATH", "/nonexistent");
    queue->enqueue(fresh);
    QSignalSpy refused(queue, &RunQueue::runFinished);
    queue->start();
    QTRY_COMPARE_WITH_TIMEOUT(refused.size(), 1, 60000);
    qputenv("PATH", path);
    QCOMPARE(refused[0][1].toString(), QStringLiteral("refused"));
    QCOMPARE(queue->entries().size(), 1);
    QCOMPARE(queue->entries()[0].state, QueueEntry::State::Failed);
    QVERIFY2(queue->entries()[0].message.contains("not on this machine's PATH"),
             qPrintable(queue->entries()[0].message));
    QCOMPARE(clusterJobs(Store(study.toStdString(), Store::Access::ReadOnly)).size(), size_t(0));
    queue->remove(queue->entries()[0].id);

    queue->enqueue(fresh);
    queue->enqueue(derived);
    QSignalSpy submitted(queue, &RunQueue::submitted);
    queue->start();
    QTRY_COMPARE_WITH_TIMEOUT(submitted.size(), 1, 60000);
    const QString said = submitted[0][0].toString();
    QVERIFY2(said.startsWith("submitted 2 runs to Slurm as job"), qPrintable(said));
    QVERIFY2(window.statusBar()->currentMessage().contains(said), qPrintable(window.statusBar()->currentMessage()));
    QVERIFY(queue->entries().isEmpty()); // the study holds them now, as the cluster's tasks
    const QString job = jobIdIn(said);
    RunTableModel *model = window.runModel();
    QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), 3, 30000);
    QVERIFY(waitForTasksToEnd(job, 2));
    QCOMPARE(taskStates(job), QStringList({"COMPLETED", "COMPLETED"}));

    window.gatherAction()->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(model->index(1, 0).data(RunTableModel::RunIdRole).toLongLong() > 0
                                 && model->index(2, 0).data(RunTableModel::RunIdRole).toLongLong() > 0,
                             60000);
    const Store store(study.toStdString(), Store::Access::ReadOnly);
    for (const PlannedRun &planned : {fresh, derived}) {
        const std::optional<RunRecord> run = store.findRun(planned.name);
        QVERIFY2(run, planned.name.c_str());
        QCOMPARE(std::string(outcomeName(run->outcome)), std::string("completed"));
        QCOMPARE(QString::fromStdString(run->configToml), QString::fromStdString(toToml(planned.config())));
    }
    QCOMPARE(store.metrics(store.findRun("from stored")->id).size(), size_t(7)); // its own steps, its origin's shape
}
#endif

void tst_Slurm::aNodeThatDiesMidRunLeavesItsRunCrashedAndResumable()
{
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    const QString plan = writtenFile(m_dir, "nodefail.toml",
                                     planOf("nodefail", {{"long",
                                                          {"train.steps=" + QString::number(kSlurmNodeFailureSteps),
                                                           "train.checkpoint_interval=50"}}}));
    const QString study = m_dir.filePath("nodefail.sqlite");
    const Result submitted = runOptlog({"study", plan, "--db", study, "--scheduler", "slurm"});
    QVERIFY2(submitted.exitCode == 0, qPrintable(submitted.err));
    const QString job = jobIdIn(submitted.err);
    const QString shard = study + ".shards/" + job + "-0.sqlite";
    QVERIFY(waitForSteps(shard, 120, 120000));

    // The node dies: slurmd, the job's step and the run's processes, with SIGKILL. Slurm notices
    // when slurmd stops answering (SlurmdTimeout, 15 s here) and ends the task NODE_FAIL.
    const QString onenode = optlog::testing::sourcePath(QStringLiteral("tests/cluster/onenode.sh"));
    QCOMPARE(QProcess::execute("bash", {onenode, "kill-node", m_cluster}), 0);
    QVERIFY(waitForTasksToEnd(job, 1, 120000));
    QCOMPARE(taskStates(job), QStringList({"NODE_FAIL"}));
    const Result gathered = runOptlog({"gather", study});
    QVERIFY2(gathered.exitCode == 0 && gathered.err.contains("gathered long (job " + job + " task 0, crashed)"),
             qPrintable(gathered.err));
    int64_t crashedAt = 0;
    {
        const Store store(study.toStdString(), Store::Access::ReadOnly);
        const RunRecord crashed = *store.findRun("long");
        QCOMPARE(std::string(outcomeName(crashed.outcome)), std::string("crashed"));
        const std::vector<StepMetrics> steps = store.metrics(crashed.id);
        QVERIFY(steps.size() >= 120);
        QCOMPARE(crashed.outcomeStep, steps.back().step); // every step it wrote, and nothing after
        QCOMPARE(int64_t(steps.size()), steps.back().step + 1);
        crashedAt = crashed.outcomeStep;
    }
    QCOMPARE(QProcess::execute("bash", {onenode, "revive-node", m_cluster}), 0);

    // The plan again: the run goes on from its last checkpoint in its shard and completes.
    const Result resumed = runOptlog({"study", plan, "--db", study, "--scheduler", "slurm", "--wait"}, 300000);
    QVERIFY2(resumed.exitCode == 0 && resumed.err.contains("submitted 1 run to Slurm"), qPrintable(resumed.err));
    // Gathered once, completed: the crashed copy was the shard's final word until the run resumed.
    QVERIFY2(resumed.err.count("gathered long") == 1 && resumed.err.contains("gathered long (job"),
             qPrintable(resumed.err));
    const Store store(study.toStdString(), Store::Access::ReadOnly);
    QCOMPARE(store.runs().size(), size_t(1));
    const RunRecord finished = *store.findRun("long");
    QCOMPARE(std::string(outcomeName(finished.outcome)), std::string("completed"));
    QCOMPARE(store.metrics(finished.id).size(), size_t(kSlurmNodeFailureSteps));
    QVERIFY(QString::fromStdString(clusterJobs(store).at(1).script).contains("'--resume'"));
    QVERIFY(crashedAt < 1499);
}

void tst_Slurm::withoutSlurmTheSchedulerIsRefused()
{
    // Slurm's commands missing from the PATH: refused, exit 2, nothing written.
    const QString plan = writtenFile(m_dir, "none.toml", planOf("none", {{"a", {}}}));
    const QString study = m_dir.filePath("none.sqlite");
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert("PATH", "/nonexistent");
    const Result refused = runOptlog({"study", plan, "--db", study, "--scheduler", "slurm"}, 60000, environment);
    QCOMPARE(refused.exitCode, 2);
    QVERIFY2(refused.err.contains(
                 "Slurm's commands (sbatch, squeue, scontrol, scancel) are not on this machine's PATH"),
             qPrintable(refused.err));
    QVERIFY(!QFile::exists(study));
    const Result unknown = runOptlog({"study", plan, "--db", study, "--scheduler", "pbs"});
    QCOMPARE(unknown.exitCode, 2);
    QVERIFY2(unknown.err.contains("--scheduler pbs is not one optlog submits to; the one it knows is slurm"),
             qPrintable(unknown.err));
}

void tst_Slurm::srunRanksTrainAsTheRanksOptlogStarts()
{
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    // Every task of the step runs the same command line; each takes its rank from srun.
    const QStringList zero1 = {"--preset", "smoke",
                               "--set",    "data.corpus=generated",
                               "--set",    "train.steps=20",
                               "--set",    "memory.warmup_steps=2",
                               "--set",    "train.microbatch=4",
                               "--set",    "distributed.zero_stage=1",
                               "--set",    "name=zero1"};
    const QString underSrun = m_dir.filePath("srun.sqlite"), startedHere = m_dir.filePath("ranks.sqlite");
    QProcess srun;
    srun.start("srun", QStringList{"--ntasks", "2", optlog::testing::optlogBinary(), "run", "--db", underSrun} + zero1);
    QVERIFY(srun.waitForFinished(180000));
    const QString err = QString::fromUtf8(srun.readAllStandardError());
    QVERIFY2(srun.exitCode() == 0, qPrintable(err));
    QVERIFY2(err.contains("rank 0 of 2 (from srun)"), qPrintable(err));
    const Result local = runOptlog(QStringList{"run", "--db", startedHere, "--ranks", "2"} + zero1, 180000);
    QVERIFY2(local.exitCode == 0, qPrintable(local.err));
    const auto srunRows = rowsByName(underSrun), localRows = rowsByName(startedHere);
    QCOMPARE(srunRows.at("zero1").trainLosses.size(), size_t(20));
    QVERIFY(srunRows.at("zero1").trainLosses == localRows.at("zero1").trainLosses);
    QVERIFY(srunRows.at("zero1").validationLosses == localRows.at("zero1").validationLosses);
    const Store store(underSrun.toStdString(), Store::Access::ReadOnly);
    QCOMPARE(store.ranks(store.runs().front().id).size(), size_t(2)); // only rank 0 wrote, of both ranks
}

void tst_Slurm::aRankZeroWhosePeerNeverComesEndsItsTaskWithTheRunCrashed()
{
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    // A step of one task told that it is one of two: the other rank's node never gave it a task.
    const QString study = m_dir.filePath("alone.sqlite");
    QProcess srun;
    srun.start("srun", {"--ntasks", "1", "bash", "-c", "SLURM_NTASKS=2 exec \"$0\" \"$@\"",
                        optlog::testing::optlogBinary(), "run", "--db", study, "--preset", "smoke", "--set",
                        "data.corpus=generated", "--set", "distributed.timeout=5", "--set", "name=alone"});
    QVERIFY(srun.waitForFinished(120000));
    const QString err = QString::fromUtf8(srun.readAllStandardError());
    QVERIFY2(srun.exitCode() == 1, qPrintable(err)); // the task ends, failed in Slurm's eyes
    QVERIFY2(err.contains("rank 0 of 2 (from srun)"), qPrintable(err));
    const Store store(study.toStdString(), Store::Access::ReadOnly);
    const RunRecord run = *store.findRun("alone");
    QCOMPARE(std::string(outcomeName(run.outcome)), std::string("crashed"));
    QVERIFY2(QString::fromStdString(run.message).startsWith("rank 1 of 2 never joined within 5 s (under a scheduler"),
             run.message.c_str());
    QVERIFY2(!QString::fromStdString(run.message).contains("Exception raised from"), run.message.c_str());
    QVERIFY(store.metrics(run.id).empty());
}

void tst_Slurm::aStoppedRankThatWaitsForRankZeroEndsCancelled()
{
    QProcess rank;
    rank.start(optlog::testing::optlogBinary(), kRankWithoutRankZero);
    QVERIFY(rank.waitForStarted());
    QVERIFY(testing::waitUntilItHoldsStopSignals(rank)); // past loading its libraries, seconds under ASan
    QThread::msleep(300);
    QElapsedTimer stopping;
    stopping.start();
    rank.terminate();
    QVERIFY(rank.waitForFinished(10000));
    QVERIFY2(stopping.elapsed() < 3000, qPrintable(QString::number(stopping.elapsed())));
    QCOMPARE(rank.exitCode(), 4);
    QVERIFY(QString::fromUtf8(rank.readAllStandardError()).contains("was stopped while waiting for rank 0"));
}

void tst_Slurm::aRankWhoseRankZeroNeverComesGivesUpAfterTheTimeout()
{
    QVERIFY(m_abandonedRank.state() == QProcess::NotRunning || m_abandonedRank.waitForFinished(120000));
    const QString err = QString::fromUtf8(m_abandonedRank.readAllStandardError());
    const int waited = QRegularExpression("waited (\\d+) s").match(err).captured(1).toInt() * 1000;
    QCOMPARE(m_abandonedRank.exitCode(), 1);
    // distributed.timeout's default, not c10d's 300 s; optlog's message, not glog's lines.
    QVERIFY2(waited >= 59000 && waited < 90000, qPrintable(QString::number(waited)));
    QVERIFY2(err.contains("could not reach rank 0's rendezvous at 127.0.0.1:1 within 60 s"), qPrintable(err));
    QVERIFY2(!err.contains("InitGoogleLogging") && !err.contains("[c10d]"), qPrintable(err));
}

QTEST_MAIN(tst_Slurm)
#include "tst_slurm.moc"
