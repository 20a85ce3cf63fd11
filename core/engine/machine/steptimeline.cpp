// SPDX-License-Identifier: MIT
#include "core/engine/machine/steptimeline.h"

#include "core/engine/machine/device.h"

#include <atomic>
#include <stdexcept>

namespace optlog {

namespace {

// The recorder recording now, if any: the model's marks reach it from the training thread, and
// on CUDA from autograd's device thread.
std::atomic<TimelineRecorder *> activeRecorder{nullptr};

} // namespace

TimelineRecorder::TimelineRecorder(c10::Device device)
    : m_device(device)
    , m_countsAllocations(!device.is_cuda())
{ }

TimelineRecorder::~TimelineRecorder()
{
    if (m_recording)
        end();
}

void TimelineRecorder::begin(int64_t step, StepPart first)
{
    TimelineRecorder *none = nullptr;
    if (!activeRecorder.compare_exchange_strong(none, this))
        throw std::logic_error("a memory timeline is already being recorded in this process");
    m_timeline = MemoryTimeline();
    m_timeline.source = m_countsAllocations ? "allocations" : "phase marks";
    m_timeline.step = step;
    // Room for a small model's whole step: growing the arrays while the step runs is its time.
    m_timeline.eventOfPoint.reserve(4096);
    m_timeline.bytesOfPoint.reserve(4096);
    m_microbatch = 0;
    m_recording = true;
    DeviceMemory(m_device).takePhasePeak(); // the first phase's peak counts from here
    mark(first);
    if (m_countsAllocations)
        CountingAllocator::instance().setObserver(this);
}

void TimelineRecorder::setMicrobatch(int64_t microbatch)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    m_microbatch = microbatch;
}

void TimelineRecorder::mark(StepPart part, int64_t block)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    std::vector<TimelinePhase> &phases = m_timeline.phases;
    if (!phases.empty() && phases.back().part == part && phases.back().block == block
        && phases.back().microbatch == m_microbatch)
        return;
    if (!phases.empty())
        closePhase();
    TimelinePhase phase;
    phase.part = part;
    phase.block = block;
    phase.microbatch = m_microbatch;
    phase.firstEvent = m_countsAllocations ? m_timeline.events : 2 * int64_t(phases.size());
    phase.startBytes = DeviceMemory(m_device).currentBytes();
    phase.peakBytes = phase.startBytes;
    phases.push_back(phase);
}

void TimelineRecorder::closePhase()
{
    TimelinePhase &phase = m_timeline.phases.back();
    phase.peakBytes = std::max(phase.startBytes, DeviceMemory(m_device).takePhasePeak());
    if (m_countsAllocations)
        return;
    // Where the caching allocator is read only at the marks: where each phase began, and its peak.
    for (const int64_t bytes : {phase.startBytes, phase.peakBytes}) {
        m_timeline.eventOfPoint.push_back(m_timeline.events++);
        m_timeline.bytesOfPoint.push_back(bytes);
    }
}

void TimelineRecorder::inUse(int64_t bytes)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    m_timeline.eventOfPoint.push_back(m_timeline.events++);
    m_timeline.bytesOfPoint.push_back(bytes);
}

MemoryTimeline TimelineRecorder::end()
{
    if (m_countsAllocations)
        CountingAllocator::instance().setObserver(nullptr);
    activeRecorder.store(nullptr);
    std::lock_guard<std::mutex> lock(m_mutex);
    m_recording = false;
    if (!m_timeline.phases.empty())
        closePhase();
    thinPoints(m_timeline);
    return std::move(m_timeline);
}

void enterPhase(StepPart part, int64_t block)
{
    if (TimelineRecorder *recorder = activeRecorder.load())
        recorder->mark(part, block);
}

at::Tensor markBlockBackward(const at::Tensor &output, int64_t block)
{
    // A hook on the tensor, not a node of our own: it runs when the gradient that reaches the
    // output is whole, before the block's own backward, and costs the step far less than a node.
    if (activeRecorder.load() && output.requires_grad())
        output.register_hook([block](const at::Tensor &) { enterPhase(StepPart::Backward, block); });
    return output;
}

} // namespace optlog
