// SPDX-License-Identifier: MIT
#pragma once

#include "core/engine/train/optimizerstep.h"

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace optlog {

// What a step leaves on the device for the host, stacked in this order so that the pending steps'
// values are read in one wait, and read back by name.
enum class StepValue : int64_t { Loss, GradientNorm, Skipped, LossScale, Count };

// One step's values as one FP32 tensor on the device, in StepValue's order.
at::Tensor stepValues(const at::Tensor &loss, const StepGate &gate, const at::Tensor &lossScale);

// A step's values as the host read them.
struct StepReading
{
    double loss = 0;
    double gradientNorm = 0;
    bool skipped = false;
    double lossScale = 0;
};

// `read`: the pending steps' stepValues, a row each, as doubles on the host.
std::vector<StepReading> readingsOf(const at::Tensor &read);

} // namespace optlog
