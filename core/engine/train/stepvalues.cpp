// SPDX-License-Identifier: MIT
#include "core/engine/train/stepvalues.h"

#include <array>

namespace optlog {

at::Tensor stepValues(const at::Tensor &loss, const StepGate &gate, const at::Tensor &lossScale)
{
    std::array<at::Tensor, size_t(StepValue::Count)> values;
    values[size_t(StepValue::Loss)] = loss.detach().to(at::kFloat);
    values[size_t(StepValue::GradientNorm)] = gate.gradNorm;
    values[size_t(StepValue::Skipped)] = gate.skip;
    values[size_t(StepValue::LossScale)] = lossScale;
    return at::stack(values);
}

std::vector<StepReading> readingsOf(const at::Tensor &read)
{
    const auto rows = read.accessor<double, 2>();
    std::vector<StepReading> readings;
    for (int64_t i = 0; i < rows.size(0); ++i) {
        const auto value = [&](StepValue which) { return rows[i][int64_t(which)]; };
        readings.push_back({value(StepValue::Loss), value(StepValue::GradientNorm), value(StepValue::Skipped) != 0,
                            value(StepValue::LossScale)});
    }
    return readings;
}

} // namespace optlog
