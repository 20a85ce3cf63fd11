// SPDX-License-Identifier: MIT
// `optlog run`: one run of the engine, with the process's signals and exit code around it.
#include "app/commands.h"

#include "core/config/config.h"
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

} // namespace

int runCommand(const RunRequest &request)
{
    std::unique_ptr<EngineRun> run;
    if (const int refused = refuseBadInput("run", [&] {
            run = std::make_unique<EngineRun>(loadRunConfig(request.preset, request.configFile, request.overrides));
            run->open(request.study);
        }))
        return refused;
    // From here on a signal ends the run as cancelled, with what it recorded; before, it ends the
    // process with nothing written.
    std::signal(SIGINT, requestStop);
    std::signal(SIGTERM, requestStop);
    const EngineRun::Result result = run->train({request.jsonLines, bool(isatty(STDERR_FILENO))}, g_stopRequested);
    const TrainingOutcome &outcome = result.outcome;
    std::cerr << "optlog run: run " << result.runId << " (" << run->config().name << ") "
              << outcomeName(outcome.outcome) << (outcome.message.empty() ? "" : ": " + outcome.message) << " -> "
              << request.study << "\n";
    return exitCodeFor(outcome.outcome);
}

} // namespace optlog
