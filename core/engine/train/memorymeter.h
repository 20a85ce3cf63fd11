// SPDX-License-Identifier: MIT
#pragma once

#include "core/contract/memorytimeline.h"
#include "core/engine/machine/device.h"
#include "core/engine/machine/steptimeline.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <vector>

namespace optlog {

// What a training run measures of its memory, told by the loop where it is: the phase a budget
// refusal names, the peak over complete steps after warm-up, the bytes one forward pass saves
// for backward, and the memory timelines of two steps (steptimeline.h): the first step this
// meter sees, where AdamW's moments are made, and the first measured one. It reads the device's
// allocator (device.h); the loop only says when.
class MemoryMeter
{
public:
    // The model's states by role (parameters, gradients, ...), read where a timeline begins and ends.
    using ModelStates = std::function<std::map<MemoryRole, int64_t>()>;

    MemoryMeter(c10::Device device, int64_t warmupSteps, ModelStates modelStates = {});

    // Called before the step draws its batches, which belong to the forward phase. At the first
    // step after warm-up (the warmupSteps + 1-th step this meter sees, so that a
    // resumed run warms up again) the peak starts over (Adam's moments exist from the first step
    // on, so the peak covers complete steps), and that step's first forward is measured.
    void stepBegins(int64_t step);
    void forwardBegins(); // of each microbatch
    void forwardEnds();   // its backward follows
    // The step's forward and backward passes are done; its optimizer step follows.
    void passesEnd();
    // A part of the step after its passes (gradient reduction, master gradients, ...).
    void enter(StepPart part);
    // What the loop does between steps: "validation", "setup". A string literal.
    void enter(const char *phase) const;
    // The step's optimizer step is done: its timeline, if it had one, is complete.
    void stepEnds();

    // The allocator's growth over the measured forward; empty when the run ended before it.
    std::optional<int64_t> savedActivationBytes() const { return m_savedActivationBytes; }
    // The peak over the first measured step's passes, before its optimizer step: the part of a
    // step's peak that grows with the batch (a TorchScript model's probes fit it apart).
    std::optional<int64_t> passPeakBytes() const { return m_passPeakBytes; }
    // The peak over that same step whole, its optimizer step included (what follows its passes
    // until the next step begins, or the run ends): above passPeakBytes where the optimizer step
    // reaches higher. Later steps do not count: their batches differ.
    std::optional<int64_t> firstStepPeakBytes() const;
    int64_t peakBytes() const { return m_memory.peakBytes(); }
    std::optional<int64_t> reservedPeakBytes() const { return m_memory.reservedPeakBytes(); }
    // The timelines recorded since the last call, in step order; one in progress (a failure cut
    // it short) ends there.
    std::vector<MemoryTimeline> takeTimelines();

private:
    // Ends the recording in progress and keeps its timeline; the states after only where the step ended.
    void keepTimeline(bool stepEnded);

    DeviceMemory m_memory;
    int64_t m_warmupSteps;
    ModelStates m_modelStates;
    int64_t m_stepsBegun = 0;
    int64_t m_microbatch = 0;      // of the step in progress
    bool m_measureForward = false; // the next forward is the one measured
    int64_t m_bytesBeforeForward = 0;
    std::optional<int64_t> m_savedActivationBytes;
    std::optional<int64_t> m_passPeakBytes;
    std::optional<int64_t> m_firstStepPeakBytes; // taken when the next step begins
    TimelineRecorder m_recorder;
    std::map<MemoryRole, int64_t> m_statesBefore; // of the step being recorded
    std::vector<MemoryTimeline> m_timelines;
};

} // namespace optlog
