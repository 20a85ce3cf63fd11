// SPDX-License-Identifier: MIT
#pragma once

#include "core/engine/machine/hostsyncs.h"

#include <chrono>
#include <cstdint>

namespace optlog {

// The steps' wall seconds, less what optlog's own diagnostics took among them, and the sum over
// the measured steps: those after the memory warm-up, as the peak is (rank 0 reports them per
// rank). A device that runs ahead of the host finishes a step only when the host waits for it, so
// time is taken between the reads of the step metrics: the steps read together share their
// interval's seconds equally (one step per read: each its own).
class StepTimer
{
public:
    // Steps from `firstMeasuredStep` on are measured; `syncs` counts exclude()'s waits.
    StepTimer(HostSyncs &syncs, int64_t firstMeasuredStep);

    // An interval of steps begins now: after a read, a validation, a checkpoint.
    void restart()
    {
        m_start = std::chrono::steady_clock::now();
        m_excludedSeconds = 0;
    }
    // Runs `work` inside the interval without counting its time: waits for the device before and
    // after it (counted as `purpose`), so that neither the queued steps nor its own kernels blur it.
    template<typename Work>
    void exclude(SyncPurpose purpose, Work &&work);
    // The interval's seconds so far, its diagnostics excluded.
    double intervalSeconds() const;
    // The step ended with `seconds`, `communicationSeconds` of them in collectives.
    void stepEnds(int64_t step, double seconds, double communicationSeconds);

    int64_t measuredSteps() const { return m_measuredSteps; }
    double measuredSeconds() const { return m_measuredSeconds; }
    double measuredCommunicationSeconds() const { return m_communicationSeconds; }

private:
    HostSyncs &m_syncs;
    int64_t m_firstMeasuredStep;
    std::chrono::steady_clock::time_point m_start;
    double m_excludedSeconds = 0;
    int64_t m_measuredSteps = 0;
    double m_measuredSeconds = 0;
    double m_communicationSeconds = 0;
};

template<typename Work>
void StepTimer::exclude(SyncPurpose purpose, Work &&work)
{
    m_syncs.wait(purpose);
    const auto start = std::chrono::steady_clock::now();
    work();
    m_syncs.wait(purpose);
    m_excludedSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace optlog
