// SPDX-License-Identifier: MIT
#pragma once

#include "core/contract/memoryroles.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace optlog {

// Which part of a training step a phase of its memory timeline belongs to, in the order a step
// runs them (gradient reduction, numerics and master gradients only where the run has them).
enum class StepPart {
    Forward,           // the batches drawn, the embedding, each block's forward
    Loss,              // the head's logits and the cross-entropy
    Backward,          // the loss's backward, then each block's backward, last block first
    GradientReduction, // data parallel: the gradients reduced across ranks
    Numerics,          // diagnostics.numerics: what 16-bit formats would do (not the step's time)
    MasterGradients,   // the FP32 gradients of the master weights, made for the optimizer step
    UnscaleAndClip,    // the gradients' norm, the loss scale undone and the clip decided
    OptimizerStep,     // AdamW's update (its moments are made at the first step)
};
const char *stepPartName(StepPart part); // "forward", "unscale and clip": as stored and shown
std::optional<StepPart> stepPartNamed(const std::string &name);

// One phase of a step: a part, and the block it is of where the model shows its blocks.
struct TimelinePhase
{
    static constexpr int64_t kNoBlock = -1;   // the embedding, or a model whose blocks optlog cannot see
    static constexpr int64_t kLossBlock = -2; // the backward of the loss: its own phase, before the blocks'

    StepPart part = StepPart::Forward;
    int64_t block = kNoBlock;
    int64_t microbatch = 0; // with accumulation, the microbatch the forward or backward is of
    int64_t firstEvent = 0; // the first allocation or free of the phase, counted from the step's start
    int64_t startBytes = 0; // in use when it began
    int64_t peakBytes = 0;  // the most in use during it, exact (the allocator's high-water mark)

    // "forward", "forward, block 3", "loss", "backward, loss", "backward, block 3", "optimizer step".
    std::string name() const;
};

// The bytes in use on a run's device over one training step, in the order the allocator saw
// them, with the step's phases. A step holds tens of thousands of allocations and frees; what is
// kept is at most kMaxPoints of them, chosen so that no phase's highest or lowest point is lost:
// the step's peak is in it exactly.
struct MemoryTimeline
{
    static constexpr size_t kMaxPoints = 2000;

    // How the points were taken. "allocations": every allocation and free (the CPU: the engine's
    // counting allocator, or torch.profiler's events in a trainer outside the engine). "phase
    // marks": the caching allocator's bytes in use and high-water mark read at each phase's start
    // (CUDA), two points a phase: where it began and its peak.
    std::string source;
    int64_t step = 0;
    bool firstStep = false;            // the first step its process took: on a new run, AdamW's moments are made in it
    bool measuredStep = false;         // the first step after warm-up, over which the run's peak is measured
    int64_t events = 0;                // the allocations and frees (or marks) of the whole step
    std::vector<TimelinePhase> phases; // in the order they ran; the first begins at event 0
    std::vector<int64_t> eventOfPoint; // each kept point's event, ascending
    std::vector<int64_t> bytesOfPoint; // the bytes in use after that event
    std::map<MemoryRole, int64_t> statesBefore; // the model's states by role when the step began: its floor
    std::map<MemoryRole, int64_t> statesAfter;  // and when it ended (AdamW's moments after a first step)

    int64_t peakBytes() const; // the highest point: the step's peak
    // The phase the step's peak is in (its first, if the peak is reached twice); -1 when empty.
    int64_t peakPhase() const;
    // The phase an event belongs to.
    size_t phaseOfEvent(int64_t event) const;
};

// As stored in a study, exported, reported, and sent as a `memory_timeline` event (docs/events.md).
nlohmann::json timelineToJson(const MemoryTimeline &timeline);
// Refuses (InputError) what timelineToJson would not write, naming the key and what it must hold:
// a study or stream may come from anywhere.
MemoryTimeline timelineFromJson(const nlohmann::json &json);
// The same as one line of JSON text, as a study stores it.
std::string timelineText(const MemoryTimeline &timeline);
MemoryTimeline timelineFromText(const std::string &text); // InputError for text that is not one

// Keeps at most `maxPoints` of the points (or two a phase, where there are more phases than half
// of them), losing no phase's highest or lowest point: each phase gets a share of the points by
// its events, and each stretch of a phase keeps its lowest and highest point, in order.
void thinPoints(MemoryTimeline &timeline, size_t maxPoints = MemoryTimeline::kMaxPoints);

} // namespace optlog
