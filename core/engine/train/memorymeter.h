// SPDX-License-Identifier: MIT
#pragma once

#include "core/engine/machine/device.h"

#include <cstdint>
#include <optional>

namespace optlog {

// What a training run measures of its memory, told by the loop where it is: the phase a budget
// refusal names, the peak over complete steps after warm-up, and the bytes one forward pass saves
// for backward. It reads the device's allocator (device.h); the loop only says when.
class MemoryMeter
{
public:
    MemoryMeter(c10::Device device, int64_t warmupSteps);

    // Called before the step draws its batches, which belong to the forward phase. At the first
    // step after warm-up (the warmupSteps + 1-th step this meter sees, so that a
    // resumed run warms up again) the peak starts over (Adam's moments exist from the first step
    // on, so the peak covers complete steps), and that step's first forward is measured.
    void stepBegins();
    void forwardBegins();
    void forwardEnds(); // backward follows
    // The step's forward and backward passes are done; its optimizer step follows.
    void passesEnd();
    // What the loop does between forward and backward passes: "optimizer step", "validation",
    // "setup". A string literal.
    void enter(const char *phase) const;

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

private:
    DeviceMemory m_memory;
    int64_t m_warmupSteps;
    int64_t m_stepsBegun = 0;
    bool m_measureForward = false; // the next forward is the one measured
    int64_t m_bytesBeforeForward = 0;
    std::optional<int64_t> m_savedActivationBytes;
    std::optional<int64_t> m_passPeakBytes;
    std::optional<int64_t> m_firstStepPeakBytes; // taken when the next step begins
};

} // namespace optlog
