// SPDX-License-Identifier: MIT
#include "core/engine/train/steptimer.h"

#include "core/engine/machine/device.h"

namespace optlog {

StepTimer::StepTimer(c10::Device device, int64_t firstMeasuredStep)
    : m_device(device)
    , m_firstMeasuredStep(firstMeasuredStep)
{ }

void StepTimer::synchronize() const
{
    optlog::synchronize(m_device);
}

double StepTimer::stepSeconds() const
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count() - m_excludedSeconds;
}

void StepTimer::stepEnds(int64_t step, double seconds, double communicationSeconds)
{
    if (step < m_firstMeasuredStep)
        return;
    m_measuredSteps += 1;
    m_measuredSeconds += seconds;
    m_communicationSeconds += communicationSeconds;
}

} // namespace optlog
