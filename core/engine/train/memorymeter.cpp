// SPDX-License-Identifier: MIT
#include "core/engine/train/memorymeter.h"

namespace optlog {

MemoryMeter::MemoryMeter(c10::Device device, int64_t warmupSteps, ModelStates modelStates)
    : m_memory(device)
    , m_warmupSteps(warmupSteps)
    , m_modelStates(std::move(modelStates))
    , m_recorder(device)
{ }

void MemoryMeter::stepBegins(int64_t step)
{
    if (m_recorder.recording()) // the step before did not say it ended
        keepTimeline(false);
    if (m_passPeakBytes && !m_firstStepPeakBytes)
        m_firstStepPeakBytes = m_memory.peakBytes();
    // A step begins by drawing its batches, the forward's input.
    m_memory.setPhase(stepPartName(StepPart::Forward));
    m_microbatch = 0;
    const bool first = m_stepsBegun == 0;
    if (m_stepsBegun++ == m_warmupSteps) {
        m_memory.resetPeak();
        m_measureForward = true;
    }
    if (!first && !m_measureForward)
        return;
    m_statesBefore = m_modelStates ? m_modelStates() : std::map<MemoryRole, int64_t>();
    m_recorder.begin(step, StepPart::Forward);
}

void MemoryMeter::forwardBegins()
{
    m_memory.setPhase(stepPartName(StepPart::Forward));
    m_recorder.setMicrobatch(m_microbatch++);
    enterPhase(StepPart::Forward);
    if (m_measureForward)
        m_bytesBeforeForward = m_memory.currentBytes();
}

void MemoryMeter::forwardEnds()
{
    if (m_measureForward) {
        m_savedActivationBytes = m_memory.currentBytes() - m_bytesBeforeForward;
        m_measureForward = false;
    }
    m_memory.setPhase(stepPartName(StepPart::Backward));
    enterPhase(StepPart::Backward, TimelinePhase::kLossBlock);
}

void MemoryMeter::passesEnd()
{
    m_recorder.setMicrobatch(0); // what follows is the step's, not a microbatch's
    if (m_stepsBegun == m_warmupSteps + 1 && !m_passPeakBytes)
        m_passPeakBytes = m_memory.peakBytes();
}

void MemoryMeter::enter(StepPart part)
{
    m_memory.setPhase(stepPartName(part));
    enterPhase(part);
}

void MemoryMeter::enter(const char *phase) const
{
    m_memory.setPhase(phase);
}

void MemoryMeter::stepEnds()
{
    if (m_recorder.recording())
        keepTimeline(true);
}

std::vector<MemoryTimeline> MemoryMeter::takeTimelines()
{
    if (m_recorder.recording())
        keepTimeline(false); // cut short by a failure: what it had until then
    return std::move(m_timelines);
}

void MemoryMeter::keepTimeline(bool stepEnded)
{
    MemoryTimeline timeline = m_recorder.end();
    timeline.firstStep = m_stepsBegun == 1;
    timeline.measuredStep = m_stepsBegun == m_warmupSteps + 1;
    timeline.statesBefore = std::move(m_statesBefore);
    if (stepEnded && m_modelStates)
        timeline.statesAfter = m_modelStates();
    m_timelines.push_back(std::move(timeline));
}

std::optional<int64_t> MemoryMeter::firstStepPeakBytes() const
{
    if (m_firstStepPeakBytes || !m_passPeakBytes)
        return m_firstStepPeakBytes;
    return m_memory.peakBytes(); // the run ended with that step
}

} // namespace optlog
