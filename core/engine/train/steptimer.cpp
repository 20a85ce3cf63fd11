// SPDX-License-Identifier: MIT
#include "core/engine/train/steptimer.h"

namespace optlog {

StepTimer::StepTimer(HostSyncs &syncs, int64_t firstMeasuredStep)
    : m_syncs(syncs)
    , m_firstMeasuredStep(firstMeasuredStep)
{ }

double StepTimer::intervalSeconds() const
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
