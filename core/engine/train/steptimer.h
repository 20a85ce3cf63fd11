// SPDX-License-Identifier: MIT
#pragma once

#include <c10/core/Device.h>

#include <chrono>
#include <cstdint>

namespace optlog {

// A step's wall seconds, less what optlog's own diagnostics took inside it, and the sum over the
// measured steps: those after the memory warm-up, as the peak is (rank 0 reports them per rank).
class StepTimer
{
public:
    // Steps from `firstMeasuredStep` on are measured.
    StepTimer(c10::Device device, int64_t firstMeasuredStep);

    void stepBegins()
    {
        m_start = std::chrono::steady_clock::now();
        m_excludedSeconds = 0;
    }
    // Runs `work` inside the step without counting its time (the device's queued work included).
    template<typename Work>
    void exclude(Work &&work);
    // The step's seconds so far, its diagnostics excluded.
    double stepSeconds() const;
    // The step ended with `seconds`, `communicationSeconds` of them in collectives.
    void stepEnds(int64_t step, double seconds, double communicationSeconds);

    int64_t measuredSteps() const { return m_measuredSteps; }
    double measuredSeconds() const { return m_measuredSeconds; }
    double measuredCommunicationSeconds() const { return m_communicationSeconds; }

private:
    void synchronize() const;

    c10::Device m_device;
    int64_t m_firstMeasuredStep;
    std::chrono::steady_clock::time_point m_start;
    double m_excludedSeconds = 0;
    int64_t m_measuredSteps = 0;
    double m_measuredSeconds = 0;
    double m_communicationSeconds = 0;
};

template<typename Work>
void StepTimer::exclude(Work &&work)
{
    synchronize();
    const auto start = std::chrono::steady_clock::now();
    work();
    synchronize();
    m_excludedSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace optlog
