// SPDX-License-Identifier: MIT
// `optlog record`: a run that a trainer outside the engine reports on stdin (the Python module's
// runs), written into a study through the recorder the engine's runs use (core/recording).
#include "app/commands.h"
#include "app/enginework.h"
#include "core/contract/format.h"
#include "core/recording/recordedstream.h"

#include <csignal>
#include <cstdio>
#include <memory>

#include <unistd.h>

namespace optlog {

namespace {

// Reads one run's events (docs/events.md) from stdin into the study; exits as `optlog run` would
// for its outcome, or kExitBadInput for a stream it refused.
int recordCommand(const std::string &study)
{
    // A Ctrl-C in the terminal is the trainer's to handle: it ends its run cancelled, and this
    // process must live to read that end. The trainer's Python module starts it in a session of
    // its own; this covers a shell pipe.
    std::signal(SIGINT, SIG_IGN);
    std::unique_ptr<Store> store;
    if (const int refused = refuseBadInput("record", [&] { store = std::make_unique<Store>(study); }))
        return refused;
    const RecordedStream recorded = recordStream(*store, STDIN_FILENO, recordedMatmulPeak);
    if (recorded.runId == 0) {
        std::fprintf(stderr, "optlog record: %s; nothing was written\n", printable(recorded.message).c_str());
        return kExitBadInput;
    }
    const RunRecord run = store->requireRun(recorded.runId);
    std::fprintf(stderr, "optlog record: run %lld (%s) in %s: %s%s%s\n", static_cast<long long>(run.id),
                 printable(run.name).c_str(), study.c_str(), outcomeName(recorded.outcome),
                 recorded.message.empty() ? "" : ": ", printable(recorded.message).c_str());
    if (!recorded.peakAdvice.empty())
        std::fprintf(stderr, "optlog record: this run has no MFU: %s\n", recorded.peakAdvice.c_str());
    return recorded.refused ? kExitBadInput : exitCodeFor(recorded.outcome);
}

} // namespace

Command addRecordCommand(CLI::App &app, const Invocation &)
{
    auto study = std::make_shared<std::string>();
    CLI::App *command = app.add_subcommand(
        "record", "record a run that your own trainer reports as JSON-lines events on stdin (docs/events.md)");
    command->add_option("--db", *study, "study file (created when missing)")->required();
    return {command, [study] { return recordCommand(*study); }};
}

} // namespace optlog
