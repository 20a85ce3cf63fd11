// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"
#include "core/contract/engineevents.h"
#include "core/contract/measurements.h"

#include <deque>
#include <string>
#include <vector>

namespace optlog {

// One sign of unstable training at one step: recorded as an event of `kind` with that step.
struct Instability
{
    EventKind kind = EventKind::LossSpike; // LossSpike, GradNormSpike, SkippedStep or NonFinite
    int64_t step = 0;
    std::string message;
};

// Watches each step's metrics for the signs of unstable training: a train loss or gradient norm
// far above its running median over the last diagnostics.spike_window finite values (a median,
// so that one spike does not hide the next), a step the scaler skipped, and values that are not
// finite. A spike is judged only once the window is full, so the fast fall of the first steps
// is never one.
class InstabilityDetector
{
public:
    explicit InstabilityDetector(const DiagnosticsConfig &config);

    std::vector<Instability> observe(const StepMetrics &metrics);

private:
    class RunningMedian
    {
    public:
        explicit RunningMedian(size_t window)
            : m_window(window)
        { }
        bool full() const { return m_values.size() == m_window; }
        double median() const;
        void add(double value);

    private:
        size_t m_window;
        std::deque<double> m_values;
    };

    // A spike of `value` against `median`, when `value` is at least `factor` times it.
    static bool isSpike(double value, const RunningMedian &median, double factor);

    DiagnosticsConfig m_config;
    RunningMedian m_loss;
    RunningMedian m_gradNorm;
};

} // namespace optlog
