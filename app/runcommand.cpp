// SPDX-License-Identifier: MIT
// `optlog run`: one run of the engine, with the process's signals and exit code around it.
#include "app/commands.h"

#include "app/launcher.h"

#include "core/config/config.h"
#include "core/config/studyplan.h"
#include "core/store/store.h"
#include "core/engine/enginerun.h"

#include <atomic>
#include <csignal>
#include <iostream>
#include <memory>

#include <unistd.h>

namespace optlog {

namespace {

std::atomic<bool> g_stopRequested{false};

// The first SIGINT or SIGTERM asks the trainer to finish its step and stop; a second one
// gets the default action, so a hung run can still be killed from the terminal.
void requestStop(int signal)
{
    g_stopRequested.store(true);
    std::signal(signal, SIG_DFL);
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
            planned.name = loadRunConfig(request.preset, request.configFile, request.overrides).name;
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

} // namespace

void holdStopSignals()
{
    const sigset_t stop = stopSignals();
    sigprocmask(SIG_BLOCK, &stop, nullptr);
}

int runCommand(const RunRequest &request, const std::string &self)
{
    // A signal during start-up (loading data, measuring the machine) cancels with nothing written;
    // during training it ends the run as cancelled, with what it recorded. One that came while
    // holdStopSignals() held it arrives now.
    std::signal(SIGINT, requestStop);
    std::signal(SIGTERM, requestStop);
    const sigset_t stop = stopSignals();
    sigprocmask(SIG_UNBLOCK, &stop, nullptr);
    if (request.repeats != 1)
        return runReplicates(request, self);
    // Past a file-size limit (ulimit -f) a write then fails as an I/O error the run reports,
    // instead of the signal's default: killing the process mid-write.
    std::signal(SIGXFSZ, SIG_IGN);
    std::unique_ptr<EngineRun> run;
    if (const int refused = refuseBadInput("run", [&] {
            run = std::make_unique<EngineRun>(loadRunConfig(request.preset, request.configFile, request.overrides),
                                              request.force ? EngineRun::MemoryCheck::Force
                                                            : EngineRun::MemoryCheck::Refuse);
            run->open(request.study);
        }))
        return refused;
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
    const TrainingOutcome &outcome = result.outcome;
    std::cerr << "optlog run: run " << result.runId << " (" << run->config().name << ") "
              << outcomeName(outcome.outcome) << (outcome.message.empty() ? "" : ": " + outcome.message) << " -> "
              << request.study << "\n";
    return exitCodeFor(outcome.outcome);
}

} // namespace optlog
