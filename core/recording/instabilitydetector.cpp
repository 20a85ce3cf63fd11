// SPDX-License-Identifier: MIT
#include "core/recording/instabilitydetector.h"

#include "core/contract/format.h"
#include "core/contract/quantiles.h"

#include <algorithm>
#include <cmath>

namespace optlog {

double InstabilityDetector::RunningMedian::median() const
{
    return medianOf({m_values.begin(), m_values.end()});
}

void InstabilityDetector::RunningMedian::add(double value)
{
    m_values.push_back(value);
    if (m_values.size() > m_window)
        m_values.pop_front();
}

InstabilityDetector::InstabilityDetector(const DiagnosticsConfig &config)
    : m_config(config)
    , m_loss(size_t(config.spikeWindow))
    , m_gradNorm(size_t(config.spikeWindow))
{ }

bool InstabilityDetector::isSpike(double value, const RunningMedian &median, double factor)
{
    return median.full() && median.median() > 0 && value >= factor * median.median();
}

std::vector<Instability> InstabilityDetector::observe(const StepMetrics &m)
{
    std::vector<Instability> found;
    const auto record = [&](EventKind kind, std::string message) {
        found.push_back({kind, m.step, std::move(message)});
    };
    const long long step = m.step;

    if (!std::isfinite(m.trainLoss))
        record(EventKind::NonFinite, formatted("training loss %g at step %lld", m.trainLoss, step));
    if (m.skipped)
        record(EventKind::SkippedStep,
               formatted("step %lld skipped: the loss scaler found an inf or NaN gradient (scale now %g)", step,
                         m.lossScale));
    // Infinite only: a NaN norm on a step that was not skipped is one a recorded trainer did not
    // report (`optlog record`); the engine's own steps without a norm are always skipped ones.
    else if (std::isinf(m.gradNorm))
        record(EventKind::NonFinite,
               formatted("gradient norm %g at step %lld: the optimizer step was skipped", m.gradNorm, step));

    const long long window = m_config.spikeWindow;
    if (std::isfinite(m.trainLoss)) {
        if (isSpike(m.trainLoss, m_loss, m_config.lossSpikeFactor))
            record(EventKind::LossSpike,
                   formatted("train loss %.4g at step %lld is %.2fx its running median %.4g over %lld steps",
                             m.trainLoss, step, m.trainLoss / m_loss.median(), m_loss.median(), window));
        m_loss.add(m.trainLoss);
    }
    if (!m.skipped && std::isfinite(m.gradNorm)) {
        if (isSpike(m.gradNorm, m_gradNorm, m_config.gradNormSpikeFactor))
            record(EventKind::GradNormSpike,
                   formatted("gradient norm %.4g at step %lld is %.2fx its running median %.4g over %lld steps",
                             m.gradNorm, step, m.gradNorm / m_gradNorm.median(), m_gradNorm.median(), window));
        m_gradNorm.add(m.gradNorm);
    }
    return found;
}

} // namespace optlog
