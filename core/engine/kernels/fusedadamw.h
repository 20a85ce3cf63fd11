// SPDX-License-Identifier: MIT
#pragma once

#include <torch/optim/adamw.h>

namespace optlog {

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
class FusedAdamW : public torch::optim::AdamW
{
public:
    using torch::optim::AdamW::AdamW;

    at::Tensor step(LossClosure closure = nullptr) override;

private:
    bool fusable() const;
};

} // namespace optlog
