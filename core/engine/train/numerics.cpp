// SPDX-License-Identifier: MIT
#include "core/engine/train/numerics.h"

#include <ATen/ATen.h>
#include <torch/optim/adamw.h>

#include <cmath>

namespace optlog {

namespace {

double fractionOf(const at::Tensor &mask)
{
    return mask.numel() ? mask.sum().item<double>() / double(mask.numel()) : 0.0;
}

} // namespace

double dynamicLossScale(double maxAbs)
{
    if (!(maxAbs > 0) || !std::isfinite(maxAbs))
        return kLargestLossScale;
    // 2^floor(log2(65504 / maxAbs)): the product stays at or below FP16's largest value.
    return std::min(kLargestLossScale, std::exp2(std::floor(std::log2(kFp16Largest / maxAbs))));
}

TensorNumerics gradientNumerics(const at::Tensor &gradient, double lossScale)
{
    const at::Tensor magnitude = gradient.detach().to(at::kFloat).abs();
    const at::Tensor nonzero = magnitude > 0;
    TensorNumerics out;
    out.fp16Underflow = fractionOf(nonzero & (magnitude < kFp16SmallestSubnormal));
    out.fp16Subnormal = fractionOf((magnitude >= kFp16SmallestSubnormal) & (magnitude < kFp16SmallestNormal));
    out.scaledUnderflow = fractionOf(nonzero & (magnitude * lossScale < kFp16SmallestSubnormal));
    out.lossScale = lossScale;
    return out;
}

double vanishingUpdateFraction(const at::Tensor &weight, const at::Tensor &update)
{
    const at::Tensor w = weight.detach().to(at::kFloat);
    // |w| = m · 2^e with m in [0.5, 1), so w lies in [2^(e-1), 2^e), where BF16's 8 significant
    // bits are 2^(e-8) apart: half an ulp is 2^(e-9).
    const at::Tensor exponent = std::get<1>(at::frexp(w));
    const at::Tensor halfUlp = at::exp2(exponent.to(at::kFloat) - 9);
    return fractionOf((w != 0) & (update.detach().to(at::kFloat).abs() < halfUlp));
}

at::Tensor adamwUpdate(const at::Tensor &weight, const torch::optim::AdamWParamState &state,
                       const torch::optim::AdamWOptions &options)
{
    const double step = double(state.step());
    const auto [beta1, beta2] = options.betas();
    const double lr = options.lr();
    const at::Tensor m = state.exp_avg().to(at::kFloat), v = state.exp_avg_sq().to(at::kFloat);
    const at::Tensor denominator = v.sqrt() / std::sqrt(1 - std::pow(beta2, step)) + options.eps();
    const at::Tensor moment = m / denominator * (lr / (1 - std::pow(beta1, step)));
    return -(moment + weight.detach().to(at::kFloat) * (lr * options.weight_decay()));
}

} // namespace optlog
