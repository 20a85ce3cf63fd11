// SPDX-License-Identifier: MIT
#pragma once

#include "core/contract/memorytimeline.h"
#include "core/engine/memory/countingallocator.h"

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <mutex>

namespace optlog {

// Records the memory timeline of one training step (core/contract/memorytimeline.h) on the run's
// device, told where the step is by phase marks: the training loop's (memorymeter.h) and the
// model's at its blocks (enterPhase, markBlockBackward below). One records at a time in a process.
//
// The same mechanism on every device: at each mark it reads the bytes in use and the high-water
// mark since the last mark (DeviceMemory::takePhasePeak), so each phase's peak is exact. On CUDA
// that is all there is, two points a phase ("phase marks": the caching allocator's
// memory_allocated and max_memory_allocated, which are what the run's peak is measured with). On
// the CPU the counting allocator also reports every allocation and free ("allocations").
class TimelineRecorder final : private CountingAllocator::Observer
{
public:
    explicit TimelineRecorder(c10::Device device);
    ~TimelineRecorder() override; // stops a recording in progress
    TimelineRecorder(const TimelineRecorder &) = delete;
    TimelineRecorder &operator=(const TimelineRecorder &) = delete;

    // Starts recording `step` from phase `first`; refuses (std::logic_error) while another records.
    void begin(int64_t step, StepPart first);
    bool recording() const { return m_recording; }
    // Where the step is now: a phase begins unless it is the one in progress.
    void mark(StepPart part, int64_t block = TimelinePhase::kNoBlock);
    void setMicrobatch(int64_t microbatch);
    // Stops recording; the step's timeline, its points thinned. Its flags and states are the caller's.
    MemoryTimeline end();

private:
    void inUse(int64_t bytes) override; // the counting allocator's, under its lock
    void closePhase();                  // the phase in progress gets its peak

    c10::Device m_device;
    bool m_countsAllocations; // the CPU: every allocation and free is a point
    bool m_recording = false;
    std::mutex m_mutex;
    int64_t m_microbatch = 0;
    MemoryTimeline m_timeline;
};

// What the model tells the recorder, when one records (otherwise nothing): a phase begins.
void enterPhase(StepPart part, int64_t block = TimelinePhase::kNoBlock);
// `output` itself; while a timeline records, with a hook that begins the backward phase of
// `block`, the block whose output it is, when its gradient is whole (before the rest of the block's
// backward). TimelinePhase::kNoBlock: the embedding's output, or a TorchScript model's logits.
at::Tensor markBlockBackward(const at::Tensor &output, int64_t block);

} // namespace optlog
