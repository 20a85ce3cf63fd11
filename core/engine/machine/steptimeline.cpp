// SPDX-License-Identifier: MIT
#include "core/engine/machine/steptimeline.h"

#include "core/engine/machine/device.h"

#include <torch/csrc/autograd/custom_function.h>

#include <atomic>
#include <stdexcept>

namespace optlog {

namespace {

// The recorder recording now, if any: the model's marks reach it from the training thread, and
// on CUDA from autograd's device thread.
std::atomic<TimelineRecorder *> activeRecorder{nullptr};

// An identity whose backward begins a block's backward phase.
struct BackwardPhaseMark : torch::autograd::Function<BackwardPhaseMark>
{
    static at::Tensor forward(torch::autograd::AutogradContext *ctx, const at::Tensor &output, int64_t block)
    {
        ctx->saved_data["block"] = block;
        return output; // autograd makes it a view of itself with this node as its gradient's
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext *ctx,
                                                   torch::autograd::variable_list gradients)
    {
        enterPhase(StepPart::Backward, ctx->saved_data["block"].toInt());
        return {gradients[0], at::Tensor()};
    }
};

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
    if (!activeRecorder.load() || !output.requires_grad())
        return output;
    return BackwardPhaseMark::apply(output, block);
}

} // namespace optlog
