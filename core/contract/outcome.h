// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <string>

namespace optlog {

// How a run ended: stored with the run by name, sent in the engine's "finished" event, and what
// `optlog run` exits with.
enum class Outcome {
    Completed, // every step ran
    Diverged,  // the training loss became inf or NaN
    Failed,    // an exception during training; its message is stored with the run
    Cancelled, // SIGINT or SIGTERM: the step finished, metrics were flushed
    Oom,       // an allocation past the memory budget, or the GPU's own memory
    Crashed,   // the engine process ended without recording an end (marked when the study is next opened)
};

const char *outcomeName(Outcome outcome); // "completed", "oom", ...
// "running" for a run that has no outcome yet.
const char *outcomeName(const std::optional<Outcome> &outcome);
std::optional<Outcome> outcomeNamed(const std::string &name);
// "running, completed, diverged, failed, cancelled, oom and crashed": every name a run's outcome has.
std::string outcomeNamesText();

// Exit codes of `optlog` and its commands. `optlog run` exits with its run's outcome's code.
enum ExitCode : int {
    kExitOk = 0,          // completed
    kExitFailed = 1,      // an exception during training; the message is stored with the run
    kExitBadInput = 2,    // config, data or study file refused before anything was written
    kExitDiverged = 3,    // non-finite loss
    kExitCancelled = 4,   // SIGINT or SIGTERM: the step finished, metrics flushed
    kExitOutOfBudget = 5, // the allocator refused an allocation past memory.budget
};

ExitCode exitCodeFor(Outcome outcome);
// The outcome an `optlog run` exit code reports: none for kExitBadInput, whose input was refused
// before a run existed; Failed for a code `optlog run` does not use.
std::optional<Outcome> outcomeForExitCode(int code);
// "0 completed, 1 failed, 2 bad input (nothing written), ...": for --help.
std::string exitCodesText();

} // namespace optlog
