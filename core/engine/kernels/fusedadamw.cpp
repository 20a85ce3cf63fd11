// SPDX-License-Identifier: MIT
#include "core/engine/kernels/fusedadamw.h"

#include "core/engine/compat/torchcompat.h"

#include <ATen/Parallel.h>
#include <ATen/TensorIterator.h> // at::internal::GRAIN_SIZE
#include <c10/util/StringUtil.h>

#include <cmath>
#include <functional>
#include <optional>
#include <tuple>

namespace optlog {

namespace {

// One step's scalars, rounded to FP32 as LibTorch's tensor-scalar operations round them.
struct StepCoefficients
{
    float decay = 1;     // 1 - lr·weight_decay
    bool decays = false; // weight_decay != 0 (LibTorch skips the multiply otherwise)
    float beta1 = 0, oneMinusBeta1 = 0;
    float beta2 = 0, oneMinusBeta2 = 0;
    float rootCorrection2 = 1; // √(1 - β₂ᵗ)
    float eps = 0;
    float negativeStepSize = 0; // -lr / (1 - β₁ᵗ)
    bool scales = false;        // the gradients are multiplied by `factor` first (a StepGate's)
    float factor = 1;
};

// The update of elements [0, n) of one tensor, written once and compiled below for each width.
// The file is compiled without contraction (-ffp-contract=off): the fused multiply-adds are the
// ones written.
inline __attribute__((always_inline)) void adamwLoop(float *__restrict weight, const float *__restrict gradient,
                                                     float *__restrict m, float *__restrict v, int64_t n,
                                                     const StepCoefficients &c)
{
    for (int64_t i = 0; i < n; ++i) {
        const float w = c.decays ? weight[i] * c.decay : weight[i];
        // As the gradient's own in-place multiply by the factor would round it, before the update.
        const float g = c.scales ? gradient[i] * c.factor : gradient[i];
        // LibTorch's operations in their order and rounding: mul_ then add_ (m), mul_ then
        // addcmul_ (v), sqrt, division, add_ (denominator), addcdiv_ (weight). Its AVX2 and
        // AVX-512 kernels compute add_'s α·b + a and addcmul_'s (α·b)·c + a as fused multiply-adds,
        // so these two are too, and the step is bitwise LibTorch's where it runs those kernels.
        const float mi = std::fma(g, c.oneMinusBeta1, m[i] * c.beta1);
        const float vi = std::fma(c.oneMinusBeta2 * g, g, v[i] * c.beta2);
        const float denominator = std::sqrt(vi) / c.rootCorrection2 + c.eps;
        m[i] = mi;
        v[i] = vi;
        weight[i] = w + c.negativeStepSize * mi / denominator;
    }
}

using AdamwPass = void (*)(float *, const float *, float *, float *, int64_t, const StepCoefficients &);

// The engine is compiled for any x86-64; this loop is where vector width pays, so it is built for
// AVX-512 and AVX2 (each with FMA) beside the baseline, and the CPU's widest is chosen once.
// (The baseline's std::fma is a call into libm, which uses the instruction where there is one.)
#if defined(__GNUC__) && defined(__x86_64__)
__attribute__((target("avx512f,fma"))) void adamwPassAvx512(float *weight, const float *gradient, float *m, float *v,
                                                            int64_t n, const StepCoefficients &c)
{
    adamwLoop(weight, gradient, m, v, n, c);
}

__attribute__((target("avx2,fma"))) void adamwPassAvx2(float *weight, const float *gradient, float *m, float *v,
                                                       int64_t n, const StepCoefficients &c)
{
    adamwLoop(weight, gradient, m, v, n, c);
}
#endif

void adamwPassBaseline(float *weight, const float *gradient, float *m, float *v, int64_t n, const StepCoefficients &c)
{
    adamwLoop(weight, gradient, m, v, n, c);
}

AdamwPass widestPass()
{
#if defined(__GNUC__) && defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("fma")) {
        if (__builtin_cpu_supports("avx512f"))
            return adamwPassAvx512;
        if (__builtin_cpu_supports("avx2"))
            return adamwPassAvx2;
    }
#endif
    return adamwPassBaseline;
}

bool onePass(const at::Tensor &t)
{
    return t.defined() && t.device().is_cpu() && t.scalar_type() == at::kFloat && t.is_contiguous() && !t.is_sparse();
}

} // namespace

bool FusedAdamW::everyGradientTakes(const std::function<bool(const at::Tensor &)> &accepts) const
{
    for (const auto &group : param_groups_) {
        if (static_cast<const torch::optim::AdamWOptions &>(group.options()).amsgrad())
            return false;
        for (const auto &p : group.params())
            if (p.grad().defined() && !accepts(p))
                return false;
    }
    return true;
}

bool FusedAdamW::fusable() const
{
    return everyGradientTakes([this](const at::Tensor &p) {
        if (!onePass(p) || !onePass(p.grad()))
            return false;
        const auto found = state_.find(compat::optimizerStateKey(p));
        if (found == state_.end())
            return true; // created by the step, contiguous like p
        const auto &state = static_cast<const torch::optim::AdamWParamState &>(*found->second);
        return onePass(state.exp_avg()) && onePass(state.exp_avg_sq());
    });
}

bool FusedAdamW::libtorchFusable() const
{
    std::optional<c10::Device> device; // one for all: a fused kernel runs on one device
    return everyGradientTakes([&device](const at::Tensor &p) {
        if (!compat::hasFusedAdamW(p.device().type()) || p.is_sparse() || p.grad().is_sparse()
            || p.grad().scalar_type() != p.scalar_type() || (device && *device != p.device()))
            return false;
        device = p.device();
        return true;
    });
}

torch::optim::AdamWParamState &FusedAdamW::stateOf(const at::Tensor &p)
{
    const compat::OptimizerStateKey key = compat::optimizerStateKey(p);
    auto found = state_.find(key);
    if (found == state_.end()) {
        // Whole before it is kept: the moments' allocation may be refused (a memory budget), and a
        // half-made state must not stay behind for the next reader.
        auto created = std::make_unique<torch::optim::AdamWParamState>();
        created->step(0);
        created->exp_avg(at::zeros_like(p, at::MemoryFormat::Preserve));
        created->exp_avg_sq(at::zeros_like(p, at::MemoryFormat::Preserve));
        found = state_.emplace(key, std::move(created)).first;
    }
    return static_cast<torch::optim::AdamWParamState &>(*found->second);
}

at::Tensor FusedAdamW::step(LossClosure closure)
{
    if (!fusable())
        return torch::optim::AdamW::step(std::move(closure));
    compat::GradDisabledGuard noGrad;
    at::Tensor loss;
    if (closure) {
        compat::GradModeGuard enableGrad(true);
        loss = closure();
    }
    onePassStep(1.0f);
    return loss;
}

bool FusedAdamW::stepOnDevice(const StepGate &gate)
{
    compat::GradDisabledGuard noGrad;
    if (fusable() && gate.skip.device().is_cpu()) {
        // The gate is in the CPU's memory: read here as a kernel reads its arguments.
        const at::Tensor skip = gate.skip.to(at::kFloat), factor = gate.factor.to(at::kFloat);
        if (skip.item<float>() == 0)
            onePassStep(factor.item<float>());
        return true;
    }
    if (!libtorchFusable())
        return false;
    libtorchFusedStep(gate);
    return true;
}

void FusedAdamW::onePassStep(float factor)
{
    for (auto &group : param_groups_) {
        const auto &options = static_cast<const torch::optim::AdamWOptions &>(group.options());
        const auto [beta1, beta2] = options.betas();
        for (auto &p : group.params()) {
            if (!p.grad().defined())
                continue;
            auto &state = stateOf(p);
            state.step(state.step() + 1);
            const double step = double(state.step());
            StepCoefficients c;
            c.decays = options.weight_decay() != 0;
            c.decay = float(1 - options.lr() * options.weight_decay());
            c.beta1 = float(beta1);
            c.oneMinusBeta1 = float(1 - beta1);
            c.beta2 = float(beta2);
            c.oneMinusBeta2 = float(1 - beta2);
            c.rootCorrection2 = float(std::sqrt(1 - std::pow(beta2, step)));
            c.eps = float(options.eps());
            c.negativeStepSize = float(-options.lr() / (1 - std::pow(beta1, step)));
            c.scales = factor != 1.0f;
            c.factor = factor;

            float *weight = p.data_ptr<float>();
            const float *gradient = p.grad().data_ptr<float>();
            float *m = state.exp_avg().data_ptr<float>();
            float *v = state.exp_avg_sq().data_ptr<float>();
            static const AdamwPass pass = widestPass();
            at::parallel_for(0, p.numel(), at::internal::GRAIN_SIZE, [&](int64_t begin, int64_t end) {
                pass(weight + begin, gradient + begin, m + begin, v + begin, end - begin, c);
            });
        }
    }
}

void FusedAdamW::libtorchFusedStep(const StepGate &gate)
{
    // One count for every tensor, as they all step together: this step counted unless skipped.
    if (!m_deviceStep.defined()) {
        double start = 0;
        for (const auto &entry : state_)
            start = double(static_cast<const torch::optim::AdamWParamState &>(*entry.second).step());
        m_deviceStep = at::full({}, start, gate.skip.options().dtype(at::kFloat));
    }
    m_deviceStep.add_(1).sub_(gate.skip);
    const at::Tensor divisor = at::reciprocal(gate.factor);
    for (auto &group : param_groups_) {
        const auto &options = static_cast<const torch::optim::AdamWOptions &>(group.options());
        std::vector<at::Tensor> weights, gradients, expAvg, expAvgSq, steps;
        for (auto &p : group.params()) {
            if (!p.grad().defined())
                continue;
            auto &state = stateOf(p);
            weights.push_back(p);
            gradients.push_back(p.grad());
            expAvg.push_back(state.exp_avg());
            expAvgSq.push_back(state.exp_avg_sq());
            steps.push_back(m_deviceStep);
        }
        if (weights.empty())
            continue;
        compat::FusedAdamWArguments arguments;
        arguments.lr = options.lr();
        std::tie(arguments.beta1, arguments.beta2) = options.betas();
        arguments.weightDecay = options.weight_decay();
        arguments.eps = options.eps();
        compat::fusedAdamW(weights, gradients, expAvg, expAvgSq, steps, arguments, divisor, gate.skip);
    }
}

void FusedAdamW::recordStepCounts()
{
    if (!m_deviceStep.defined())
        return;
    const auto step = int64_t(m_deviceStep.item<float>());
    for (auto &entry : state_)
        static_cast<torch::optim::AdamWParamState &>(*entry.second).step(step);
}

} // namespace optlog
