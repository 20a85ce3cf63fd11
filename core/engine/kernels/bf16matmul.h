// SPDX-License-Identifier: MIT
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>

namespace optlog {

// BF16 products on oneDNN's matmul primitive, for a CPU with AVX-512, where LibTorch 1.13's own
// BF16 products copy strided operands (attention's q, k and v) into contiguous ones and add the
// bias in a pass of their own. The primitive reads any strides in place, adds the bias and applies
// alpha inside the product, and sums in FP32, rounding each output to BF16 once.
//
// Each shape's primitive is made once per process and kept (making one JIT-compiles its kernels:
// 0.3-0.6 ms, a product's own time at the default preset); its scratchpad comes from LibTorch's
// allocator, so the step's measured peak includes it.

// The implementation oneDNN dispatches BF16 products to on this CPU, as its verbose log names it
// ("brg:avx512_core_bf16"), found by making one small product's primitive; what a run records.
std::string bf16MatmulImplementation();

// alpha·a·b (+ bias on every row, when defined) over the last two dimensions into `out`: BF16
// tensors on the CPU, a and b with the same batch dimensions and any strides, bias of b's columns,
// out contiguous and of the product's shape.
void bf16Matmul(const at::Tensor &a, const at::Tensor &b, const at::Tensor &bias, float alpha, at::Tensor &out);

} // namespace optlog
