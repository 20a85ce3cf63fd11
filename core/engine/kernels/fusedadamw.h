// SPDX-License-Identifier: MIT
#pragma once

#include <torch/optim/adamw.h>

#include <functional>

namespace optlog {

// What one optimizer step does with its gradients, decided on their device (the trainer's
// gradientGate), so that the step's kernels need nothing from the host.
struct StepGate
{
    at::Tensor gradNorm; // 0-d FP32: the global norm of the unscaled gradients, before clipping
    at::Tensor skip;     // 0-d FP32: 1 when a gradient holds an inf or NaN and the step is skipped, else 0
    at::Tensor factor;   // 0-d FP32: what every gradient is multiplied by first (1/loss scale x clipping's factor)
};

// LibTorch's AdamW, stepping each FP32 CPU tensor in one pass over its memory. LibTorch's step is
// a chain of about nine whole-tensor operations per parameter (decay, two for each moment, square
// root, division, epsilon, the update) that reads and writes the tensors some twenty times and
// allocates two temporaries; for this engine's models that was a fifth of an FP32 step (docs/
// benchmarks.md). This step reads the weight, gradient and both moments once and writes the
// weight and moments once, with LibTorch's arithmetic operation for operation (bitwise its result
// where ATen runs its AVX2 or AVX-512 kernels, tests/engine/tst_fusedadamw.cpp) and its state
// (AdamWParamState: moments, step count), so saving, loading and numerics.h's adamwUpdate see
// LibTorch's optimizer. A step in which any tensor is not an FP32, contiguous CPU tensor (CUDA,
// 16-bit weights without master copies, amsgrad) is LibTorch's own.
//
// Under a StepGate (stepOnDevice) the step never waits for the host: this pass reads the gate's
// skip flag and factor as a kernel reads its arguments, and on CUDA LibTorch's fused AdamW (one
// multi-tensor kernel per group, compat::fusedAdamW) takes them on the device, keeping the step
// count there too.
class FusedAdamW : public torch::optim::AdamW
{
public:
    using torch::optim::AdamW::AdamW;

    at::Tensor step(LossClosure closure = nullptr) override;
    // One step under `gate`, without a host read: false where neither pass can take these tensors
    // (16-bit weights on the CPU, amsgrad, CUDA on 1.x), and then nothing was done: the caller
    // applies the gate with LibTorch's own step.
    bool stepOnDevice(const StepGate &gate);
    // The state's step counts, which LibTorch's fused step keeps on the device, copied into each
    // parameter's state (a host read): before saving, or reading the state.
    void recordStepCounts();

private:
    // No amsgrad, and `accepts` every parameter that has a gradient.
    bool everyGradientTakes(const std::function<bool(const at::Tensor &)> &accepts) const;
    bool fusable() const;         // by optlog's one pass: FP32, contiguous, on the CPU
    bool libtorchFusable() const; // by LibTorch's fused kernel: one device that has it, one dtype a tensor
    void onePassStep(float factor);
    void libtorchFusedStep(const StepGate &gate);
    torch::optim::AdamWParamState &stateOf(const at::Tensor &parameter);

    at::Tensor m_deviceStep; // LibTorch's fused step's count (0-d FP32 on the device); undefined before it
};

} // namespace optlog
