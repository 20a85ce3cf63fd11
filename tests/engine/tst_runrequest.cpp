// SPDX-License-Identifier: MIT
// What `optlog run` decides before it trains: where the config comes from (--from, --resume),
// whether resuming is allowed, the rendezvous of rank 0 and of the others, the stop signals; and
// which stored runs a quantization can start from. Each refusal is an InputError (exit 2) that
// names what is wrong, with nothing written.
#include "core/config/config.h"
#include "core/config/configerror.h"
#include "core/engine/run/runrequest.h"
#include "core/engine/run/stopsignals.h"
#include "core/engine/run/storedweights.h"
#include "core/store/store.h"
#include "core/store/weights.h"

#include <QtTest>
#include <csignal>
#include <functional>
#include <map>
#include <thread>

#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace optlog;

namespace {

// A study with one run that ended as `outcome`, its config the smoke preset's.
int64_t finishedRun(Store &store, const std::string &name, Outcome outcome)
{
    const int64_t id = store.createRun(name, toToml(loadRunConfig("smoke", "", {"name=\"" + name + "\""})));
    store.finishRun(id, outcome, 5, "");
    return id;
}

WeightFile checkpointAt(int64_t step)
{
    WeightFile file;
    file.kind = WeightFileKind::Checkpoint;
    file.step = step;
    file.path = "weights/step-" + std::to_string(step) + ".pt";
    file.bytes = 10;
    file.sha256 = std::string(64, '0');
    return file;
}

// The message of the InputError `call` throws; empty when it throws none.
template<typename Call>
std::string refusal(Call call)
{
    try {
        call();
    } catch (const InputError &e) {
        return e.what();
    }
    return {};
}

bool mentions(const std::string &message, const std::string &part)
{
    return message.find(part) != std::string::npos;
}

// Runs `body` in a child process of its own, with SIGTERM's default action: the test runner
// handles SIGTERM itself, and a signal may have to end the process. `body` writes what it got past
// to the descriptor it is given; returns that, and the child's wait status in `status`.
QByteArray saidInAChild(const std::function<void(int)> &body, int &status)
{
    int progress[2];
    if (pipe(progress) != 0)
        return "no pipe";
    const pid_t child = fork();
    if (child == 0) {
        close(progress[0]);
        std::signal(SIGTERM, SIG_DFL);
        body(progress[1]);
        _exit(0);
    }
    close(progress[1]);
    QByteArray said;
    char buffer[64];
    for (ssize_t n; (n = read(progress[0], buffer, sizeof(buffer))) > 0;)
        said.append(buffer, n);
    close(progress[0]);
    if (child < 0 || waitpid(child, &status, 0) != child)
        return "no child";
    return said;
}

} // namespace

class tst_RunRequest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void fromNamesAStoredRun()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath("source.sqlite").toStdString();
        {
            Store store(path);
            finishedRun(store, "fp32", Outcome::Completed);
        }
        const SourceRun source = sourceRunOf(path + ":fp32");
        QCOMPARE(source.origin.runName, std::string("fp32"));
        QCOMPARE(source.origin.runId, int64_t(1));
        QVERIFY(std::filesystem::path(source.origin.study).is_absolute());
        QVERIFY(mentions(source.configToml, "fp32"));

        QVERIFY(mentions(refusal([&] { sourceRunOf(path); }), "write STUDY:RUN"));
        QVERIFY(mentions(refusal([&] { sourceRunOf(path + ":"); }), "write STUDY:RUN"));
        const std::string missing = refusal([&] { sourceRunOf(path + ":bf16"); });
        QVERIFY2(mentions(missing, "no run 'bf16'") && mentions(missing, "optlog runs"), missing.c_str());
    }

    void fromTakesTheStoredConfigWithOverridesOnly()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath("source.sqlite").toStdString();
        {
            Store store(path);
            finishedRun(store, "fp32", Outcome::Completed);
        }
        RunRequest request;
        request.from = path + ":fp32";
        request.overrides = {"train.steps=7"};
        const ResolvedRun resolved = resolveRun(request);
        QCOMPARE(resolved.config.name, std::string("fp32"));
        QCOMPARE(resolved.config.train.steps, int64_t(7));
        QVERIFY(resolved.source && !resolved.resumption);
        QCOMPARE(resolved.source->origin.runName, std::string("fp32"));
        request.preset = "smoke";
        QVERIFY(mentions(refusal([&] { resolveRun(request); }), "without --preset or --config"));
    }

    void latestCheckpointIsTheHighestStep()
    {
        QTemporaryDir dir;
        Store store(dir.filePath("study.sqlite").toStdString());
        const int64_t id = finishedRun(store, "stopped", Outcome::Cancelled);
        QVERIFY(!latestCheckpoint(store, id));
        for (const int64_t step : {10, 30, 20})
            addWeightFile(store, id, checkpointAt(step));
        WeightFile final = checkpointAt(40);
        final.kind = WeightFileKind::Final;
        addWeightFile(store, id, final);
        QCOMPARE(latestCheckpoint(store, id)->step, int64_t(30));
    }

    void resumeOnlyWhatCanGoOn_data()
    {
        QTest::addColumn<int>("outcome");
        QTest::addColumn<bool>("withCheckpoint");
        QTest::addColumn<QString>("expected");
        QTest::newRow("completed") << int(Outcome::Completed) << true << "completed; to train it longer";
        QTest::newRow("diverged") << int(Outcome::Diverged) << true << "would meet the same end";
        QTest::newRow("oom") << int(Outcome::Oom) << true << "would meet the same end";
        QTest::newRow("no checkpoint") << int(Outcome::Cancelled) << false << "has no checkpoint to resume from";
        // Eligible: the checkpoint itself is then checked, and this one's file does not exist.
        QTest::newRow("cancelled") << int(Outcome::Cancelled) << true << "step-20.pt";
        QTest::newRow("crashed") << int(Outcome::Crashed) << true << "step-20.pt";
    }
    void resumeOnlyWhatCanGoOn()
    {
        QFETCH(int, outcome);
        QFETCH(bool, withCheckpoint);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        RunRequest request;
        request.study = dir.filePath("study.sqlite").toStdString();
        {
            Store store(request.study);
            const int64_t id = finishedRun(store, "run", Outcome(outcome));
            if (withCheckpoint)
                addWeightFile(store, id, checkpointAt(20));
        }
        request.resume = "run";
        const std::string message = refusal([&] { resumptionOf(request); });
        QVERIFY2(mentions(message, expected.toStdString()), message.c_str());
    }

    void resumeRefusesARunningRunAndOtherSources()
    {
        QTemporaryDir dir;
        RunRequest request;
        request.study = dir.filePath("study.sqlite").toStdString();
        {
            Store store(request.study);
            store.createRun("running", toToml(loadRunConfig("smoke", "", {})));
        }
        request.resume = "running";
        QVERIFY(mentions(refusal([&] { resumptionOf(request); }), "is still running"));
        request.resume = "missing";
        QVERIFY(mentions(refusal([&] { resumptionOf(request); }), "no run 'missing'"));
        request.preset = "smoke";
        QVERIFY(mentions(refusal([&] { resumptionOf(request); }), "leave out --preset"));
    }

    void onlyACompletedRunWithItsFinalWeightsIsQuantized()
    {
        QTemporaryDir dir;
        Store store(dir.filePath("study.sqlite").toStdString());
        const RunRecord cancelled = *store.findRun(std::to_string(finishedRun(store, "stopped", Outcome::Cancelled)));
        QVERIFY(mentions(refusal([&] { quantizableRun(store, cancelled); }), "has not completed (cancelled)"));
        const RunRecord completed = *store.findRun(std::to_string(finishedRun(store, "done", Outcome::Completed)));
        QVERIFY(mentions(refusal([&] { quantizableRun(store, completed); }), "has no final weights on disk"));
        WeightFile final = checkpointAt(5);
        final.kind = WeightFileKind::Final;
        addWeightFile(store, completed.id, final);
        // Recorded but not on disk: the file itself is checked before anything reads it.
        QVERIFY(mentions(refusal([&] { quantizableRun(store, completed); }), "step-5.pt"));
    }

    void rankZeroServesTheRendezvousTheConfigAsksFor()
    {
        RunConfig config = loadRunConfig("smoke", "", {});
        RunRequest request;
        QVERIFY(!rankZeroRendezvous(request, config));

        config.distributed.ranks = 2;
        const std::optional<Rendezvous> local = rankZeroRendezvous(request, config);
        QVERIFY(local);
        QCOMPARE(local->host, std::string("127.0.0.1"));
        QCOMPARE(local->port, uint16_t(0)); // a free one, chosen when the store starts
        QCOMPARE(local->worldSize, int64_t(2));

        request.rendezvous = "10.0.0.1:29500";
        request.worldSize = 2;
        const std::optional<Rendezvous> served = rankZeroRendezvous(request, config);
        QCOMPARE(served->host, std::string("10.0.0.1"));
        QCOMPARE(served->port, uint16_t(29500));
        QCOMPARE(served->rank, int64_t(0));

        request.worldSize = 3;
        QVERIFY(mentions(refusal([&] { rankZeroRendezvous(request, config); }), "give both the same number"));
        request.rendezvous.clear();
        QVERIFY(mentions(refusal([&] { rankZeroRendezvous(request, config); }), "go with --rendezvous"));
        request.worldSize = 0;
        request.resume = "stopped";
        QVERIFY(mentions(refusal([&] { rankZeroRendezvous(request, config); }), "cannot be resumed yet"));
    }

    void aJoinedRankTakesTheRunFromRankZero()
    {
        RunRequest request;
        request.rendezvous = "127.0.0.1:29500";
        request.rank = 1;
        request.worldSize = 2;
        const Rendezvous joined = joinedRankRendezvous(request);
        QCOMPARE(joined.rank, int64_t(1));
        QCOMPARE(joined.port, uint16_t(29500));
        request.preset = "smoke";
        QVERIFY(mentions(refusal([&] { joinedRankRendezvous(request); }), "take the run from rank 0"));
        request.preset.clear();
        request.rank = 2;
        QVERIFY(mentions(refusal([&] { joinedRankRendezvous(request); }), "--rank 2"));
    }

    void aLaunchersEnvironmentGivesTheRank()
    {
        std::map<std::string, std::string> environment;
        const auto variable = [&environment](const char *name) -> const char * {
            const auto found = environment.find(name);
            return found == environment.end() ? nullptr : found->second.c_str();
        };
        QVERIFY(!launcherRank(variable)); // no launcher

        // srun --ntasks 4: the step's first node, a port from the job id.
        environment = {{"SLURM_STEP_ID", "0"},
                       {"SLURM_PROCID", "2"},
                       {"SLURM_NTASKS", "4"},
                       {"SLURM_JOB_ID", "123456"},
                       {"SLURM_JOB_NODELIST", "node[07-08],gpu1"},
                       {"SLURM_STEP_NODELIST", "node[07-08]"}};
        std::optional<LauncherRank> given = launcherRank(variable);
        QVERIFY(given);
        QCOMPARE(given->launcher, std::string("srun"));
        QCOMPARE(given->rank, int64_t(2));
        QCOMPARE(given->worldSize, int64_t(4));
        QCOMPARE(given->rendezvous, std::string("node07:23456"));
        environment["MASTER_ADDR"] = "10.0.0.5";
        environment["MASTER_PORT"] = "29500";
        QCOMPARE(launcherRank(variable)->rendezvous, std::string("10.0.0.5:29500"));

        // torchrun's names win.
        environment["RANK"] = "1";
        environment["WORLD_SIZE"] = "2";
        given = launcherRank(variable);
        QCOMPARE(given->launcher, std::string("torchrun"));
        QCOMPARE(given->rank, int64_t(1));
        QCOMPARE(given->worldSize, int64_t(2));
        environment.erase("MASTER_PORT");
        QVERIFY(mentions(refusal([&] { launcherRank(variable); }), "MASTER_ADDR or MASTER_PORT is not"));
        environment["MASTER_PORT"] = "29500";
        environment["RANK"] = "one";
        QVERIFY(mentions(refusal([&] { launcherRank(variable); }), "RANK=one"));

        // A batch script's single task is no data-parallel run.
        environment = {{"SLURM_STEP_ID", "0"}, {"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}};
        QVERIFY(!launcherRank(variable));

        QCOMPARE(firstSlurmNode("node[07-09,12],gpu1"), std::string("node07"));
        QCOMPARE(firstSlurmNode("gpu1,node[07-09]"), std::string("gpu1"));
        QCOMPARE(firstSlurmNode("localhost"), std::string("localhost"));
        QCOMPARE(firstSlurmNode("n[3,5]"), std::string("n3"));
    }

    void aHeldStopSignalIsTakenOnceWatchedAndTheNextEndsTheProcess()
    {
        int status = 0;
        const QByteArray said = saidInAChild(
            [](int progress) {
                holdStopSignals();
                kill(getpid(), SIGTERM); // held: neither the stop flag nor the default action yet
                usleep(50 * 1000);
                if (!stopRequested().load())
                    (void) !write(progress, "held ", 5);
                watchStopSignals();
                for (int i = 0; i < 500 && !stopRequested().load(); ++i)
                    usleep(10 * 1000);
                if (stopRequested().load())
                    (void) !write(progress, "taken ", 6);
                kill(getpid(), SIGTERM); // the second: the default action, the end of the process
                usleep(2000 * 1000);
                (void) !write(progress, "alive", 5);
            },
            status);
        QCOMPARE(said, QByteArray("held taken "));
        QVERIFY(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
    }

    // A library's thread, started before main() held the signals, can be the one the kernel gives
    // SIGTERM to. It must be held all the same, not end the process (the start-up SIGTERM that
    // tst_hostile saw end the engine by its default action, once in a loaded CI run).
    void aStopSignalGivenToAThreadStartedEarlierIsHeldToo()
    {
        int status = 0;
        const QByteArray said = saidInAChild(
            [](int progress) {
                std::atomic<pid_t> early{0};
                std::thread library([&early] {
                    early.store(pid_t(syscall(SYS_gettid)));
                    usleep(3000 * 1000);
                });
                while (!early.load())
                    usleep(1000);
                holdStopSignals();
                syscall(SYS_tgkill, getpid(), early.load(), SIGTERM); // to the early thread alone
                usleep(50 * 1000);
                if (!stopRequested().load())
                    (void) !write(progress, "held ", 5);
                watchStopSignals();
                if (stopRequested().load())
                    (void) !write(progress, "taken", 5);
                _exit(0); // the library thread still sleeps
            },
            status);
        QCOMPARE(said, QByteArray("held taken"));
        QVERIFY(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
};

QTEST_GUILESS_MAIN(tst_RunRequest)
#include "tst_runrequest.moc"
