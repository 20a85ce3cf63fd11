// SPDX-License-Identifier: MIT
// `optlog run`: one run of the engine, with the process's signals and exit code around it.
#include "app/commands.h"

#include "app/launcher.h"

#include "core/analysis/analysis.h"
#include "core/config/config.h"
#include "core/config/studyplan.h"
#include "core/store/store.h"
#include "core/engine/enginerun.h"
#include "core/engine/rankrun.h"
#include "core/engine/weightfiles.h"
#include "core/contract/format.h"

#include "core/config/configerror.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <atomic>
#include <filesystem>
#include <csignal>
#include <iostream>
#include <memory>
#include <thread>

#include <pthread.h>
#include <unistd.h>

namespace optlog {

namespace {

std::atomic<bool> g_stopRequested{false};

// The stored run `--from STUDY:RUN` names (split at the last colon: a path may hold one), read
// without writing its study.
struct SourceRun
{
    RunOrigin origin;
    std::string configToml;
};
SourceRun sourceRunOf(const std::string &from)
{
    const size_t colon = from.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == from.size())
        throw StoreError("--from " + from + ": write STUDY:RUN, such as study.sqlite:fp32 or study.sqlite:3");
    const std::string study = from.substr(0, colon), name = from.substr(colon + 1);
    const Store store(study, Store::Access::ReadOnly);
    const RunRecord run = store.requireRunNamed(name);
    std::error_code error;
    const std::string absolute = std::filesystem::absolute(study, error).lexically_normal().string();
    return {{absolute, run.id, run.name}, run.configToml};
}

// The run `--resume` continues, and the checkpoint it goes on from: a run that ended without
// completing (cancelled, crashed, failed), whose last checkpoint's file is whole.
struct Resumption
{
    RunRecord run;
    WeightFile checkpoint;
};
Resumption resumptionOf(const RunRequest &request)
{
    if (!request.preset.empty() || !request.configFile.empty() || !request.overrides.empty() || !request.from.empty()
        || request.repeats != 1)
        throw ConfigError("--resume continues a run with its own config; leave out --preset, --config, --set, "
                          "--memory-budget, --from and --repeats");
    const Store store(request.study); // marks a run whose engine died as crashed first
    const RunRecord run = store.requireRunNamed(request.resume);
    const std::string label = "run " + std::to_string(run.id) + " (" + printable(run.name) + ")";
    if (!run.isFinished())
        throw StoreError("--resume: " + label + " is still running; resume it after it has stopped");
    if (*run.outcome == Outcome::Completed)
        throw StoreError("--resume: " + label + " completed; to train it longer, `optlog run --from " + request.study
                         + ":" + std::to_string(run.id) + " --set train.steps=N` starts a longer run from its config");
    if (*run.outcome == Outcome::Diverged || *run.outcome == Outcome::Oom)
        throw StoreError("--resume: " + label + " ended " + outcomeName(*run.outcome)
                         + "; resuming it would meet the same end. Change its config and run it again with --from");
    std::optional<WeightFile> last;
    for (const WeightFile &file : store.weightFiles(run.id))
        if (file.kind == WeightFileKind::Checkpoint && (!last || file.step > last->step))
            last = file;
    if (!last)
        throw StoreError("--resume: " + label + " has no checkpoint to resume from (it stopped before writing one: "
                         "set train.checkpoint_interval to write one every so many steps)");
    // A damaged checkpoint, or one that does not fit the stored config, refuses before the run is touched.
    checkWeightsFitConfig(loadDerivedConfig(run.configToml, label, {}), store.absolutePath(last->path), *last);
    return {run, *last};
}

bool setsName(const std::vector<std::string> &overrides)
{
    return std::any_of(overrides.begin(), overrides.end(), [](const std::string &assignment) {
        std::string key = assignment.substr(0, assignment.find('='));
        key.erase(0, key.find_first_not_of(' '));
        key.erase(key.find_last_not_of(' ') + 1);
        return key == "name";
    });
}

// Each replicate over seeds in its own engine process, one after another: the exit code of the
// first that did not complete, else 0. A cancelled replicate stops the rest.
int runReplicates(const RunRequest &request, const std::string &self)
{
    std::vector<PlannedRun> replicates;
    if (const int refused = refuseBadInput("run", [&] {
            PlannedRun planned;
            planned.preset = request.preset;
            planned.configFile = request.configFile;
            planned.overrides = request.overrides;
            if (!request.from.empty()) {
                planned.from = request.from;
                planned.fromToml = sourceRunOf(request.from).configToml;
            }
            planned.name = requestedConfig(request).name;
            planned.repeats = request.repeats;
            replicates = replicatesOf(planned);
            Store(request.study); // a file that is not a study is refused before any replicate runs
        }))
        return refused;
    int result = kExitOk;
    for (const auto &replicate : replicates) {
        std::vector<std::string> arguments = runArguments(replicate, request.study);
        if (request.jsonLines)
            arguments.push_back("--jsonl");
        if (request.force)
            arguments.push_back("--force");
        const int code = runChild(self, arguments);
        if (result == kExitOk)
            result = code;
        if (code == kExitCancelled || code == kExitBadInput)
            break;
        if (g_stopRequested.load())
            return kExitCancelled; // a signal to this process alone stops the replicates after this one
    }
    return result;
}

// A rank other than 0 of a data-parallel run: it joins rank 0's rendezvous, trains with it and
// reports to it; it writes no study. Exits with its training's outcome.
int runJoinedRank(const RunRequest &request)
{
    if (!request.preset.empty() || !request.configFile.empty() || !request.overrides.empty() || !request.from.empty()
        || !request.resume.empty() || !request.study.empty() || request.repeats != 1)
        return refuseBadInput("run", [] {
            throw ConfigError("--rank 1 and above take the run from rank 0; leave out --db, --preset, --config, --set, "
                              "--from, --resume and --repeats");
        });
    Rendezvous rendezvous;
    if (const int refused = refuseBadInput("run", [&] {
            rendezvous = parseRendezvous(request.rendezvous, request.rank, request.worldSize);
        }))
        return refused;
    try {
        // Waits up to 300 s for rank 0's store and the run's config, which then sets the timeout.
        RankGroup ranks(rendezvous, std::chrono::seconds(300));
        return exitCodeFor(runRank(ranks, g_stopRequested));
    } catch (const std::exception &e) {
        std::cerr << "optlog run: rank " << request.rank << ": " << e.what() << "\n";
        return kExitFailed;
    }
}

// Rank 0 of a data-parallel run: the rendezvous it serves (a free port on the loopback, or
// --rendezvous for ranks on other machines), and the world size the config and the options agree on.
Rendezvous rankZeroRendezvous(const RunRequest &request, const RunConfig &config)
{
    if (request.rendezvous.empty()) {
        if (request.rank >= 0 || request.worldSize > 0)
            throw ConfigError("--rank and --world-size go with --rendezvous HOST:PORT");
        return {"127.0.0.1", 0, 0, config.distributed.ranks};
    }
    if (request.worldSize != config.distributed.ranks)
        throw ConfigError("--world-size " + std::to_string(request.worldSize) + " but the run's distributed.ranks = "
                          + std::to_string(config.distributed.ranks) + ": give both the same number");
    Rendezvous rendezvous = parseRendezvous(request.rendezvous, 0, request.worldSize);
    return rendezvous;
}

} // namespace

namespace {

sigset_t stopSignals()
{
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    return stop;
}

// The first SIGINT or SIGTERM asks the trainer to finish its step and stop; after it a second one,
// of either kind, gets the default action, so a hung run can still be killed from the terminal.
void endOnTheNextStopSignal()
{
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
}

void requestStop(int)
{
    g_stopRequested.store(true);
    endOnTheNextStopSignal();
}

// Both signals stay blocked in the engine's threads (holdStopSignals() blocked them before the
// process re-executed itself, and a thread inherits its creator's mask) and one thread of their
// own takes them with sigwait, so that no signal interrupts a library's kernels, as a handler
// does: it runs on whichever thread the kernel picks, on that thread's stack. (Stopped runs that
// aborted with a corrupted heap inside oneDNN's sgemm, docs/benchmarks.md, were why; that this
// was their cause is not shown.) The handler stays for threads started before the signals were
// blocked, to which the kernel may deliver them instead: where the process did not re-execute
// (its variables already set), a library's thread is there before main().
void watchStopSignals()
{
    std::signal(SIGINT, requestStop);
    std::signal(SIGTERM, requestStop);
    std::thread([] {
        const sigset_t stop = stopSignals();
        int signal = 0;
        if (sigwait(&stop, &signal) != 0)
            return;
        g_stopRequested.store(true);
        endOnTheNextStopSignal();
        // Only this thread takes the next one, and must be alive to: its default action ends the process.
        pthread_sigmask(SIG_UNBLOCK, &stop, nullptr);
        for (;;)
            pause();
    }).detach();
}

} // namespace

void holdStopSignals()
{
    const sigset_t stop = stopSignals();
    sigprocmask(SIG_BLOCK, &stop, nullptr);
}

RunConfig requestedConfig(const RunRequest &request)
{
    if (!request.resume.empty()) {
        const RunRecord run = resumptionOf(request).run;
        return loadDerivedConfig(run.configToml, "run " + std::to_string(run.id) + " of " + request.study, {});
    }
    if (request.from.empty())
        return loadRunConfig(request.preset, request.configFile, request.overrides);
    if (!request.preset.empty() || !request.configFile.empty())
        throw ConfigError("--from takes the stored run's config; change its fields with --set, without --preset "
                          "or --config");
    const SourceRun source = sourceRunOf(request.from);
    return loadDerivedConfig(source.configToml, "run " + std::to_string(source.origin.runId) + " of "
                                                    + source.origin.study, request.overrides);
}

void nameDerivedRun(RunRequest &request)
{
    if (request.from.empty() || setsName(request.overrides))
        return;
    const SourceRun source = sourceRunOf(request.from);
    std::vector<RunRecord> existing;
    if (std::filesystem::exists(request.study))
        existing = Store(request.study, Store::Access::ReadOnly).runs();
    request.overrides.push_back(
        fieldAssignment(*findConfigField("name"), derivedRunName(source.origin.runName, existing)));
}

int runCommand(const RunRequest &request, const std::string &self)
{
    // A signal during start-up (loading data, measuring the machine) cancels with nothing written;
    // during training it ends the run as cancelled, with what it recorded. One that came while
    // holdStopSignals() held it is taken now.
    watchStopSignals();
    if (request.rank > 0)
        return runJoinedRank(request);
    if (request.repeats != 1)
        return runReplicates(request, self);
    // Past a file-size limit (ulimit -f) a write then fails as an I/O error the run reports,
    // instead of the signal's default: killing the process mid-write.
    std::signal(SIGXFSZ, SIG_IGN);
    std::unique_ptr<EngineRun> run;
    std::optional<Rendezvous> rendezvous;
    if (const int refused = refuseBadInput("run", [&] {
            run = std::make_unique<EngineRun>(requestedConfig(request), request.force ? EngineRun::MemoryCheck::Force
                                                                                      : EngineRun::MemoryCheck::Refuse);
            if (!request.from.empty())
                run->setOrigin(sourceRunOf(request.from).origin);
            if (!request.resume.empty()) {
                const Resumption resumption = resumptionOf(request);
                run->resumeFrom(resumption.run.id, resumption.checkpoint);
            }
            if (run->config().distributed.ranks > 1 || !request.rendezvous.empty() || request.rank >= 0
                || request.worldSize > 0) {
                if (!request.resume.empty())
                    throw ConfigError("--resume: a run over several ranks cannot be resumed yet");
                rendezvous = rankZeroRendezvous(request, run->config());
            }
            run->open(request.study);
        }))
        return refused;
    // Data parallel: rank 0 serves the rendezvous, starts the other ranks on this machine unless
    // they join from others, and trains with them.
    LocalRanks localRanks;
    if (rendezvous) {
        try {
            auto ranks = std::make_shared<RankGroup>(*rendezvous, std::chrono::seconds(run->config().distributed.timeout));
            if (request.rendezvous.empty()) {
                localRanks.start(self, ranks->port(), rendezvous->worldSize, run->config().runtime.device == "cuda");
                ranks->setLostRankProbe([&localRanks] { return localRanks.lost(); });
            }
            run->trainWithRanks(ranks);
        } catch (const std::exception &e) {
            std::cerr << "optlog run: " << e.what() << "; the run was not created\n";
            return kExitFailed;
        }
    }
    if (g_stopRequested.load()) {
        std::cerr << "optlog run: cancelled while starting, before the run was created in " << request.study << "\n";
        return kExitCancelled;
    }
    EngineRun::Result result;
    try {
        result = run->train({request.jsonLines, bool(isatty(STDERR_FILENO))}, g_stopRequested);
    } catch (const StoreError &e) {
        std::cerr << "optlog run: " << e.what() << "; the run could not be created\n";
        return kExitFailed;
    }
    localRanks.finish(std::chrono::seconds(run->config().distributed.timeout));
    const TrainingOutcome &outcome = result.outcome;
    std::cerr << "optlog run: run " << result.runId << " (" << run->config().name << ") "
              << outcomeName(outcome.outcome) << (outcome.message.empty() ? "" : ": " + outcome.message) << " -> "
              << request.study << "\n";
    return exitCodeFor(outcome.outcome);
}

} // namespace optlog
