// SPDX-License-Identifier: MIT
#include "core/engine/precision/precision.h"

#include "core/config/config.h"
#include "core/engine/compat/torchcompat.h"

#include <ATen/ATen.h>

#include <cmath>

namespace optlog {

c10::ScalarType scalarType(Dtype dtype)
{
    switch (dtype) {
    case Dtype::Float32: return c10::kFloat;
    case Dtype::BFloat16: return c10::kBFloat16;
    case Dtype::Float16: return c10::kHalf;
    }
    return c10::kFloat;
}

PrecisionPlan precisionPlan(const std::string &name)
{
    const PrecisionMode &mode = precisionModeNamed(name);
    PrecisionPlan plan;
    plan.mode = mode.name;
    plan.weights = scalarType(mode.weights);
    plan.compute = scalarType(mode.compute);
    plan.masterWeights = mode.masterWeights.has_value();
    plan.autocast = mode.autocast;
    plan.lossScaling = mode.lossScaling;
    return plan;
}

AutocastGuard::AutocastGuard(c10::DeviceType device, c10::ScalarType dtype, bool enabled)
    : m_device(device)
    , m_active(enabled)
{
    if (!m_active)
        return;
    m_previousEnabled = compat::autocastEnabled(device);
    m_previousDtype = compat::autocastDtype(device);
    compat::setAutocastEnabled(device, true);
    compat::setAutocastDtype(device, dtype);
    compat::incrementAutocastNesting();
}

AutocastGuard::~AutocastGuard()
{
    if (!m_active)
        return;
    // The cache holds casts of the weights; it is only valid inside the outermost region.
    if (compat::decrementAutocastNesting() == 0)
        compat::clearAutocastCache();
    compat::setAutocastEnabled(m_device, m_previousEnabled);
    compat::setAutocastDtype(m_device, m_previousDtype);
}

LossScaler::LossScaler(double initialScale, int64_t growthInterval, double backoff, double growth)
    : m_scale(initialScale)
    , m_growthInterval(growthInterval)
    , m_backoff(backoff)
    , m_growth(growth)
{ }

at::Tensor LossScaler::scale(const at::Tensor &loss) const
{
    return loss * m_scale;
}

bool LossScaler::unscale(const std::vector<at::Tensor> &parameters) const
{
    compat::GradDisabledGuard noGrad;
    const double inverse = 1.0 / m_scale;
    std::vector<at::Tensor> finite;
    for (const auto &p : parameters) {
        at::Tensor g = p.grad();
        if (!g.defined())
            continue;
        g.mul_(inverse);
        finite.push_back(at::isfinite(g).all());
    }
    // One host read for all of them: on a GPU each read waits for the queued kernels.
    return finite.empty() || at::stack(finite).all().item<bool>();
}

void LossScaler::restore(const State &state)
{
    m_scale = state.scale;
    m_cleanSteps = state.cleanSteps;
    m_skipped = state.skipped;
}

void LossScaler::update(bool foundNonFinite)
{
    if (foundNonFinite) {
        m_scale *= m_backoff;
        m_cleanSteps = 0;
        ++m_skipped;
        return;
    }
    if (++m_cleanSteps >= m_growthInterval) {
        m_scale *= m_growth;
        m_cleanSteps = 0;
    }
}

std::string dtypeName(c10::ScalarType type)
{
    for (Dtype dtype : {Dtype::Float32, Dtype::BFloat16, Dtype::Float16})
        if (scalarType(dtype) == type)
            return optlog::dtypeName(dtype);
    switch (type) {
    case c10::kDouble: return "float64";
    case c10::kLong: return "int64";
    default: return c10::toString(type);
    }
}

std::string dtypeName(const at::Tensor &tensor)
{
    return dtypeName(tensor.scalar_type());
}

} // namespace optlog
