// SPDX-License-Identifier: MIT
#include "core/engine/train/memorymeter.h"

namespace optlog {

MemoryMeter::MemoryMeter(c10::Device device, int64_t warmupSteps)
    : m_memory(device)
    , m_warmupSteps(warmupSteps)
{ }

void MemoryMeter::stepBegins()
{
    if (m_passPeakBytes && !m_firstStepPeakBytes)
        m_firstStepPeakBytes = m_memory.peakBytes();
    // A step begins by drawing its batches, the forward's input.
    m_memory.setPhase("forward");
    if (m_stepsBegun++ != m_warmupSteps)
        return;
    m_memory.resetPeak();
    m_measureForward = true;
}

void MemoryMeter::forwardBegins()
{
    m_memory.setPhase("forward");
    if (m_measureForward)
        m_bytesBeforeForward = m_memory.currentBytes();
}

void MemoryMeter::forwardEnds()
{
    if (m_measureForward) {
        m_savedActivationBytes = m_memory.currentBytes() - m_bytesBeforeForward;
        m_measureForward = false;
    }
    m_memory.setPhase("backward");
}

void MemoryMeter::passesEnd()
{
    if (m_stepsBegun == m_warmupSteps + 1 && !m_passPeakBytes)
        m_passPeakBytes = m_memory.peakBytes();
}

std::optional<int64_t> MemoryMeter::firstStepPeakBytes() const
{
    if (m_firstStepPeakBytes || !m_passPeakBytes)
        return m_firstStepPeakBytes;
    return m_memory.peakBytes(); // the run ended with that step
}

void MemoryMeter::enter(const char *phase) const
{
    m_memory.setPhase(phase);
}

} // namespace optlog
