// SPDX-License-Identifier: MIT
#pragma once

#include "core/contract/measurements.h"
#include "core/contract/memorytimeline.h"
#include "core/contract/outcome.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace optlog {

// What a training run reports while it trains: optlog's public wire format (docs/events.md).
// `optlog run --jsonl` writes each event as one JSON object per line on stdout, and the
// workbench's queue reads them; `optlog record` reads them from any trainer (the Python module's
// runs) and writes the run into a study. toJsonLine() and parseEngineEvent() below are the
// format's one writer and one reader, and its keys are in engineevents.cpp alone. The kinds that
// are log messages are also stored with the run.
enum class EventKind {
    Started,    // the run exists in the study
    Step,       // an optimizer step finished
    Validation, // a validation loss
    Finished,   // the run ended, with its outcome
    Memory,     // the run's memory by role, measured by a trainer outside the engine
    Flops,      // the model's FLOPs per token, from a trainer outside the engine
    Timeline,   // the memory timeline of one step (a followed run's, or a trainer's outside the engine)
    Note,       // log messages: stored with the run, shown by `optlog show`
    Warning,
    Oom, // what the memory budget refused (its message is a JSON object)
    // Instability, recorded as facts with their step (core/recording/instabilitydetector.h detects them):
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

// The format this build writes, and the newest it reads: keys are only ever added within one.
inline constexpr int64_t kEventFormat = 1;
// Longer than any event the engine writes: a longer line is refused before it is parsed.
inline constexpr size_t kMaxEventLineBytes = 1 << 20;

struct RunStarted
{
    int64_t totalSteps = 0; // 0: not known
    std::string message;    // data, threads, device, budget: what the run starts with
    // What a trainer outside the engine says to create its run with (`optlog record`). The engine's
    // own run exists before it starts, and leaves these empty.
    std::string name;
    std::string group;
    std::string configJson;      // an object; nested objects are flattened to dotted keys when stored
    std::string environmentJson; // an object
    std::string recorder;        // who wrote the stream ("optlog Python module 1, train.py")
    // The GPT the run trains in engine config keys ({"model.width": 256, ...}), when the memory
    // model knows it: its prediction is then stored beside what the trainer measures.
    std::string
        engineConfigJson; // In a followed run's stream (docs/remote.md), a started line after the first is the start
    // message its study stored, at this time (ISO 8601 UTC).
    std::string at;
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

// A trainer outside the engine measured its memory by role (the engine stores its own directly).
struct MemoryReport
{
    std::vector<MemoryRow> rows;
    std::string dtypesJson;  // {"weights": "bfloat16", ...}; empty when not given
    std::string peakMeasure; // how the peak was measured
};

// A trainer outside the engine says its model's FLOPs per token, the numerator of its MFU (the
// engine counts its own GPT's).
struct ModelFlops
{
    double perToken = 0; // finite and above 0
    std::string how;     // "given" by the trainer, or "counted" (torch.utils.flop_counter over one step)
    std::string counter; // what counted them, when counted
};

// The memory timeline of one training step (memorytimeline.h): an engine's, sent by its host to a
// run followed from elsewhere, or one a trainer outside the engine recorded (`run.memory(...)`).
struct MemoryTimelineReport
{
    MemoryTimeline timeline;
};

struct RunFinished
{
    Outcome outcome = Outcome::Completed;
    int64_t step = -1; // the last step completed; diverged and oom: the step that failed. -1 in a
                       // stream from outside the engine: the last step it reported
    std::string message;
    std::string at; // when it ended, ISO 8601 UTC, as a study holds it; empty: when it is read
    // The run's environment as its study holds it at the end (a followed run's, whose environment
    // the engine completes while it trains); empty: not sent.
    std::string environmentJson;
};

struct LogMessage
{
    EventKind kind = EventKind::Note; // Note, Warning, Oom or an instability
    std::string message;
    int64_t step = -1; // the step it happened at; -1: none in particular
    std::string at;    // when, ISO 8601 UTC, as a study holds it; empty: when it is read
};

struct EngineEvent
{
    int64_t run = 0; // the run's id in its study; 0 from a trainer outside the engine
    std::variant<RunStarted, StepDone, Validated, MemoryReport, ModelFlops, MemoryTimelineReport, RunFinished, LogMessage>
        body;

    EventKind kind() const;
};

// One line of JSON, without the newline. Non-finite numbers (a diverged loss) are written as null.
std::string toJsonLine(const EngineEvent &event);

// The event one line holds, or why it holds none: not JSON, not an object, an unknown kind, a key
// missing or of the wrong type, a format newer than kEventFormat. Never throws; null reads as NaN
// where a number may be non-finite, and an optional number left out reads as NaN too.
struct ParsedEvent
{
    std::optional<EngineEvent> event;
    std::string error; // empty when `event` is set
};
ParsedEvent parseEngineEvent(const std::string &line);

} // namespace optlog
