// SPDX-License-Identifier: MIT
#include "core/engine/train/optimizerstep.h"

#include "core/engine/compat/torchcompat.h"

#include <ATen/ATen.h>
#include <torch/optim/adamw.h>

#include <cmath>

namespace optlog {

StepGate gradientGate(const std::vector<at::Tensor> &tensors, const LossScaler *scaler, double maxNorm)
{
    // LibTorch's clip_grad_norm_, its norm and coefficient in its arithmetic (so that the CPU's
    // steps are bitwise what they were), except that the coefficient is not applied here: the
    // optimizer's kernel applies it (optlog's one pass only where it is not 1, so that a step that
    // clips nothing costs no pass over the gradients). Nothing is read on the host.
    compat::GradDisabledGuard noGrad;
    std::vector<at::Tensor> norms;
    for (const auto &p : tensors)
        if (p.grad().defined())
            norms.push_back(p.grad().norm());
    if (norms.empty()) {
        const auto options = at::TensorOptions()
                                 .dtype(at::kFloat)
                                 .device(tensors.empty() ? c10::Device(c10::DeviceType::CPU) : tensors.front().device());
        return {at::zeros({}, options), at::zeros({}, options), at::ones({}, options)};
    }
    at::Tensor total = norms.size() == 1 ? norms.front() : at::stack(norms).norm();
    at::Tensor unscale;
    if (scaler) {
        unscale = at::reciprocal(scaler->scaleTensor());
        total = total.to(at::kFloat) * unscale;
    }
    const at::Tensor coefficient = ((maxNorm > 0 ? maxNorm : INFINITY) / (total + 1e-6)).clamp_max(1.0);
    StepGate gate;
    gate.gradNorm = total.to(at::kFloat);
    gate.skip = at::logical_not(at::isfinite(gate.gradNorm)).to(at::kFloat);
    gate.factor = unscale.defined() ? coefficient.to(at::kFloat) * unscale : coefficient.to(at::kFloat);
    return gate;
}

StepGate stepUnlessNonFinite(torch::optim::AdamW &optimizer, const std::vector<at::Tensor> &tensors, LossScaler *scaler,
                             double maxNorm, HostSyncs &syncs, const GradientGate &gate)
{
    const StepGate decided = gate(tensors, scaler, maxNorm);
    auto *fused = dynamic_cast<FusedAdamW *>(&optimizer);
    if (!fused || !fused->stepOnDevice(decided)) {
        // LibTorch's own step is a chain of whole-tensor operations with no skip flag: the host
        // decides whether it runs.
        compat::GradDisabledGuard noGrad;
        for (const auto &t : tensors)
            if (t.grad().defined())
                t.grad().mul_(decided.factor);
        if (syncs.read(decided.skip, SyncPurpose::OptimizerSkip).item<float>() == 0)
            optimizer.step();
    }
    if (scaler)
        scaler->update(decided.skip);
    return decided;
}

std::unique_ptr<torch::optim::AdamW> makeAdamW(const std::vector<at::Tensor> &decayed,
                                               const std::vector<at::Tensor> &plain, const TrainConfig &train,
                                               bool libtorchStep)
{
    const auto options = torch::optim::AdamWOptions(train.learningRate).betas({train.beta1, train.beta2}).eps(train.eps);
    std::vector<torch::optim::OptimizerParamGroup> groups;
    groups.emplace_back(decayed, std::make_unique<torch::optim::AdamWOptions>(
                                     torch::optim::AdamWOptions(options).weight_decay(train.weightDecay)));
    groups.emplace_back(plain, std::make_unique<torch::optim::AdamWOptions>(
                                   torch::optim::AdamWOptions(options).weight_decay(0.0)));
    if (libtorchStep)
        return std::make_unique<torch::optim::AdamW>(std::move(groups), options);
    return std::make_unique<FusedAdamW>(std::move(groups), options);
}

double learningRateAt(const TrainConfig &train, int64_t step)
{
    if (step < train.warmupSteps)
        return train.learningRate * double(step + 1) / double(train.warmupSteps);
    const int64_t decaySteps = std::max<int64_t>(1, train.steps - 1 - train.warmupSteps);
    const double progress = std::min(1.0, double(step - train.warmupSteps) / double(decaySteps));
    const double cosine = 0.5 * (1.0 + std::cos(M_PI * progress));
    return train.minLearningRate + cosine * (train.learningRate - train.minLearningRate);
}

} // namespace optlog
