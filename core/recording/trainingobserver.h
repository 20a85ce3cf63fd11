// SPDX-License-Identifier: MIT
#pragma once

#include "core/contract/engineevents.h"
#include "core/contract/measurements.h"
#include "core/contract/memorytimeline.h"
#include "core/contract/outcome.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace optlog {

// What the trainer reports while it runs; the recorder writes it to the study.
class TrainingObserver
{
public:
    virtual ~TrainingObserver() = default;
    virtual void step(const StepMetrics &) { }
    virtual void validated(const ValidationPoint &) { }
    // `step`: the optimizer step the event belongs to; -1 when none.
    virtual void event(EventKind kind, const std::string &message, int64_t step = -1) { }
    // Every diagnostics.numerics_every steps: what 16-bit formats would do to the run's tensors.
    virtual void numerics(const std::vector<TensorNumerics> &) { }
    // A weights file (final weights or a checkpoint) is on the disk, whole.
    virtual void weightsWritten(const WeightFile &) { }
    // The memory timeline of a step (its first, its first measured), soon after the step, outside
    // the steps' measured time; one cut short by the run's end, when the run ends.
    virtual void memoryTimeline(const MemoryTimeline &) { }
};

struct TrainingOutcome
{
    Outcome outcome = Outcome::Completed; // or Diverged, Cancelled, Oom
    int64_t step = -1;                    // last step completed; diverged and oom: the step that failed
    std::optional<BudgetRefusal> refusal; // oom: what the budget refused
    std::string message;
    std::vector<MemoryRow> measuredMemory;     // by role, measured on the real tensors and the allocator
    std::optional<int64_t> passPeakBytes;      // MemoryMeter's: the peak before the optimizer step
    std::optional<int64_t> firstStepPeakBytes; // and after it, over that step alone
    std::map<std::string, std::string> dtypes; // weights, gradients, master_weights, optimizer_state, compute
    // Over the measured steps (after warm-up): their wall seconds, and the part spent in collectives.
    int64_t measuredSteps = 0;
    double stepSeconds = 0;
    double communicationSeconds = 0;
    std::map<std::string, int64_t> hostSyncs; // the waits for the device, by purpose (core/engine/machine/hostsyncs.h)
};

} // namespace optlog
