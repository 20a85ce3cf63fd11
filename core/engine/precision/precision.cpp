// SPDX-License-Identifier: MIT
#include "core/engine/precision/precision.h"

#include "core/config/config.h"
#include "core/contract/rowlookup.h"
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

LossScaler::LossScaler(double initialScale, int64_t growthInterval, double backoff, double growth, c10::Device device)
    : m_scale(at::full({}, initialScale, at::TensorOptions().dtype(at::kFloat).device(device)))
    , m_cleanSteps(at::zeros({}, m_scale.options()))
    , m_skipped(at::zeros({}, m_scale.options()))
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
    std::vector<at::Tensor> finite;
    for (const auto &p : parameters) {
        at::Tensor g = p.grad();
        if (!g.defined())
            continue;
        g.div_(m_scale);
        finite.push_back(at::isfinite(g).all());
    }
    // One host read for all of them.
    return finite.empty() || at::stack(finite).all().item<bool>();
}

void LossScaler::update(const at::Tensor &skipped)
{
    compat::GradDisabledGuard noGrad;
    // All in the device's arithmetic, exact for these small integers and powers of two.
    const at::Tensor clean = (m_cleanSteps + 1) * (1 - skipped); // a skip resets the count
    const at::Tensor grows = (clean >= double(m_growthInterval)).to(at::kFloat);
    m_scale.mul_(skipped * m_backoff + (1 - skipped) * (1 + grows * (m_growth - 1)));
    m_cleanSteps.copy_(clean * (1 - grows));
    m_skipped.add_(skipped);
}

double LossScaler::currentScale() const
{
    return m_scale.item<double>();
}

int64_t LossScaler::skippedSteps() const
{
    return int64_t(m_skipped.item<double>());
}

LossScaler::State LossScaler::state() const
{
    const at::Tensor values = at::stack({m_scale, m_cleanSteps, m_skipped}).to(at::kDouble).cpu();
    return {values[0].item<double>(), int64_t(values[1].item<double>()), int64_t(values[2].item<double>())};
}

void LossScaler::restore(const State &state)
{
    m_scale.fill_(state.scale);
    m_cleanSteps.fill_(double(state.cleanSteps));
    m_skipped.fill_(double(state.skipped));
}

std::string dtypeName(c10::ScalarType type)
{
    for (Dtype dtype : {Dtype::Float32, Dtype::BFloat16, Dtype::Float16})
        if (scalarType(dtype) == type)
            return optlog::dtypeName(dtype);
    // The other dtypes a run's tensors hold, as NumPy and PyTorch's Python spell them.
    static constexpr Named<c10::ScalarType> others[] = {{c10::kDouble, "float64"}, {c10::kLong, "int64"}};
    const Named<c10::ScalarType> *row = findRow(others, &Named<c10::ScalarType>::value, type);
    return row ? row->name : c10::toString(type);
}

std::string dtypeName(const at::Tensor &tensor)
{
    return dtypeName(tensor.scalar_type());
}

} // namespace optlog
