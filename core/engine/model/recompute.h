// SPDX-License-Identifier: MIT
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <vector>

namespace optlog {

using TensorFunction = std::function<at::Tensor(const std::vector<at::Tensor> &)>;

// Activation checkpointing (LibTorch's C++ API has no torch.utils.checkpoint): runs `function`
// without keeping its intermediates for backward, and recomputes them in the backward pass.
// Only `inputs` are saved. The generator state of the inputs' device (CPU or CUDA) is saved and
// restored around the recomputation, so dropout draws the same mask twice; the autocast state of
// the forward pass on that device is restored too. Gradients reach the parameters `function` uses through a nested backward.
at::Tensor checkpointed(const TensorFunction &function, const std::vector<at::Tensor> &inputs);

} // namespace optlog
