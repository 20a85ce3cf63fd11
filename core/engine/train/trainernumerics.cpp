// SPDX-License-Identifier: MIT
// What FP16 and BF16 would do to the run's own tensors (numerics.h), measured by the trainer every
// diagnostics.numerics_every steps: its gradients before the optimizer step, AdamW's updates and
// the blocks' activations after it.
#include "core/engine/compat/torchcompat.h"
#include "core/engine/memory/countingallocator.h"
#include "core/engine/train/numerics.h"
#include "core/engine/train/trainer.h"

#include <torch/optim/adamw.h>

#include <algorithm>
#include <map>

namespace optlog {

std::vector<TensorNumerics> Trainer::gradientNumerics(int64_t step) const
{
    CountingAllocator::Uncounted uncounted; // optlog's measurement, not the run's memory
    compat::GradDisabledGuard noGrad;
    // The gradient of the loss itself: a scaler's factor divided out; clipping comes later.
    const double unscale = m_scaler ? 1.0 / m_scaler->currentScale() : 1.0;
    double largest = 0;
    for (const auto &p : m_parameters)
        if (p.grad().defined())
            largest = std::max(largest, p.grad().abs().max().item<double>() * unscale);
    const double lossScale = dynamicLossScale(largest);
    std::vector<TensorNumerics> rows;
    TensorNumerics all{step, kAllParameters, 0, 0, 0, lossScale};
    double elements = 0;
    for (size_t i = 0; i < m_parameters.size(); ++i) {
        if (!m_parameters[i].grad().defined())
            continue;
        TensorNumerics row = optlog::gradientNumerics(m_parameters[i].grad().to(torch::kFloat) * unscale, lossScale);
        row.step = step;
        row.tensor = m_parameterNames[i];
        rows.push_back(row);
        const double n = double(m_parameters[i].numel());
        elements += n;
        all.fp16Underflow += row.fp16Underflow * n;
        all.fp16Subnormal += row.fp16Subnormal * n;
        all.scaledUnderflow += row.scaledUnderflow * n;
    }
    all.fp16Underflow /= elements;
    all.fp16Subnormal /= elements;
    all.scaledUnderflow /= elements;
    rows.push_back(all);
    return rows;
}

void Trainer::addUpdateAndActivationNumerics(std::vector<TensorNumerics> &rows)
{
    CountingAllocator::Uncounted uncounted;
    compat::GradDisabledGuard noGrad;
    const int64_t step = rows.empty() ? m_lastCompletedStep + 1 : rows.front().step;
    const std::vector<at::Tensor> &optimized = optimizedTensors();
    auto &state = m_optimizer->state();
    // Per parameter: its vanishing elements and its elements (under ZeRO, of rank 0's shard of it).
    const std::vector<int64_t> pieceOf = sharded() ? m_parallel->shardParameters() : std::vector<int64_t>();
    std::map<size_t, std::pair<double, double>> byParameter;
    for (auto &group : m_optimizer->param_groups()) {
        const auto &options = static_cast<const torch::optim::AdamWOptions &>(group.options());
        for (const auto &tensor : group.params()) {
            const auto found = state.find(compat::optimizerStateKey(tensor));
            const auto index = std::find_if(optimized.begin(), optimized.end(),
                                            [&](const at::Tensor &t) {
                                                return t.unsafeGetTensorImpl() == tensor.unsafeGetTensorImpl();
                                            })
                               - optimized.begin();
            if (found == state.end() || size_t(index) >= optimized.size())
                continue; // no step taken yet: no update to judge
            const auto &adamw = static_cast<const torch::optim::AdamWParamState &>(*found->second);
            const double fraction = vanishingUpdateFraction(tensor, adamwUpdate(tensor, adamw, options));
            auto &counts = byParameter[sharded() ? size_t(pieceOf[size_t(index)]) : size_t(index)];
            counts.first += fraction * double(tensor.numel());
            counts.second += double(tensor.numel());
        }
    }
    double vanishing = 0, elements = 0;
    for (const auto &[parameter, counts] : byParameter) {
        for (auto &row : rows)
            if (row.tensor == m_parameterNames[parameter])
                row.vanishingUpdates = counts.first / counts.second;
        vanishing += counts.first;
        elements += counts.second;
    }
    for (auto &row : rows)
        if (row.tensor == kAllParameters && elements > 0)
            row.vanishingUpdates = vanishing / elements;

    m_model->setTraining(false); // no dropout: the activations as validation sees them
    {
        AutocastGuard autocast(m_device.type(), m_plan.compute, m_plan.autocast);
        const std::vector<double> maxima = m_model->blockOutputMaxima(m_validationBatches.front().inputs);
        for (size_t block = 0; block < maxima.size(); ++block) {
            TensorNumerics row;
            row.step = step;
            row.tensor = "blocks." + std::to_string(block);
            row.activationMax = maxima[block];
            rows.push_back(row);
        }
    }
    m_model->setTraining(true);
}

} // namespace optlog
