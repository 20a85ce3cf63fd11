// SPDX-License-Identifier: MIT
#pragma once
// Shared by the Qt tests and the Qt-free device checks: gradients of one forward and backward,
// and how far two sets of them are apart.

#include "core/engine/model/gpt.h"
#include "core/engine/precision/precision.h"
#include "core/engine/train/accumulation.h"
#include "core/engine/train/trainer.h"

#include <ATen/ATen.h>
#include <torch/utils.h>

#include <algorithm>
#include <vector>

namespace optlog::testing {

// Every parameter's gradient (on the CPU) after one forward and backward on `device`, from a
// model built with seed 5 and a forward that starts from seed 6, so dropout draws the same masks.
inline std::vector<at::Tensor> oneStepGradients(const GPTOptions &options, const at::Tensor &inputs,
                                                const PrecisionPlan &plan = {},
                                                c10::Device device = c10::Device(c10::DeviceType::CPU))
{
    torch::manual_seed(5);
    GPT model(options);
    model->to(device);
    model->train();
    torch::manual_seed(6);
    accumulateGradients(*model, {{inputs.to(device), inputs.to(device)}}, plan);
    std::vector<at::Tensor> out;
    for (const auto &p : model->parameters())
        out.push_back(p.grad().cpu().clone());
    return out;
}

inline double largestDifference(const std::vector<at::Tensor> &a, const std::vector<at::Tensor> &b)
{
    double worst = 0;
    for (size_t i = 0; i < a.size(); ++i)
        worst = std::max(worst, (a[i] - b[i]).abs().max().item<double>());
    return worst;
}

} // namespace optlog::testing
