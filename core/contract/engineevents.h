// SPDX-License-Identifier: MIT
#pragma once

#include "core/contract/measurements.h"
#include "core/contract/outcome.h"

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

namespace optlog {

// What the engine reports while a run trains. `optlog run --jsonl` writes each event as one JSON
// object per line on stdout, and the workbench's queue reads them: toJsonLine() and
// parseEngineEvent() below are the format's one writer and one reader, and its keys are in
// engineevents.cpp alone. The kinds that are log messages are also stored with the run.
enum class EventKind {
    Started,    // the run exists in the study
    Step,       // an optimizer step finished
    Validation, // a validation loss
    Finished,   // the run ended, with its outcome
    Note,       // log messages: stored with the run, shown by `optlog show`
    Warning,
    Oom, // what the memory budget refused (its message is a JSON object)
    // Instability, recorded as facts with their step (core/analysis/instability.h detects them):
    LossSpike,     // train loss far above its running median
    GradNormSpike, // gradient norm far above its running median
    SkippedStep,   // the loss scaler found an inf or NaN gradient and skipped the step
    NonFinite,     // a non-finite loss or gradient norm
};
const char *eventKindName(EventKind kind); // "started", "step", "loss_spike", ...
std::optional<EventKind> eventKindNamed(const std::string &name);
bool isInstability(EventKind kind);
// "1 loss spike", "3 skipped steps": how a verdict counts them.
std::string instabilityCount(EventKind kind, int64_t count);

struct RunStarted
{
    int64_t totalSteps = 0;
    std::string message; // data, threads, device, budget: what the run starts with
};

struct StepDone
{
    StepMetrics metrics;
    std::optional<int64_t> allocatedBytes; // the device allocator's bytes in use after the step
    std::optional<int64_t> peakBytes;      // and its high-water mark
};

struct Validated
{
    ValidationPoint point;
};

struct RunFinished
{
    Outcome outcome = Outcome::Completed;
    int64_t step = -1; // the last step completed; diverged and oom: the step that failed
    std::string message;
};

struct LogMessage
{
    EventKind kind = EventKind::Note; // Note, Warning, Oom or an instability
    std::string message;
    int64_t step = -1; // the step it happened at; -1: none in particular
};

struct EngineEvent
{
    int64_t run = 0; // the run's id in its study
    std::variant<RunStarted, StepDone, Validated, RunFinished, LogMessage> body;

    EventKind kind() const;
};

// One line of JSON, without the newline. Non-finite numbers (a diverged loss) are written as null.
std::string toJsonLine(const EngineEvent &event);

// The event one line holds, or why it holds none: not JSON, not an object, an unknown kind, a key
// missing or of the wrong type. Never throws; null reads as NaN where a number may be non-finite.
struct ParsedEvent
{
    std::optional<EngineEvent> event;
    std::string error; // empty when `event` is set
};
ParsedEvent parseEngineEvent(const std::string &line);

} // namespace optlog
