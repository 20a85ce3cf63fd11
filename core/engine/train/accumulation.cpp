// SPDX-License-Identifier: MIT
#include "core/engine/train/accumulation.h"

#include <ATen/ATen.h>

namespace optlog {

at::Tensor accumulateGradients(LanguageModel &model, const std::vector<Batch> &microbatches, const PrecisionPlan &plan,
                               const LossScaler *scaler, MemoryMeter *meter)
{
    for (auto &p : model.parameterTensors())
        if (p.grad().defined())
            p.grad().zero_();
    const c10::Device device = microbatches.front().inputs.device();
    const double share = 1.0 / double(microbatches.size());
    at::Tensor total = at::zeros({}, at::TensorOptions().device(device));
    for (const Batch &microbatch : microbatches) {
        at::Tensor loss;
        if (meter)
            meter->forwardBegins();
        {
            // Forward only: backward runs in the dtypes the forward chose.
            AutocastGuard autocast(device.type(), plan.compute, plan.autocast);
            loss = model.loss(microbatch.inputs, microbatch.targets);
        }
        if (meter)
            meter->forwardEnds();
        const at::Tensor part = loss * share;
        (scaler ? scaler->scale(part) : part).backward();
        total += loss.detach() * share;
    }
    return total;
}

} // namespace optlog
