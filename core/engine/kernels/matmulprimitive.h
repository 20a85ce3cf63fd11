// SPDX-License-Identifier: MIT
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <string>

namespace optlog {

// FP32 and BF16 products on oneDNN's matmul primitive (ProductPath::Primitive). Unlike LibTorch
// 1.13's own products, which copy strided operands (attention's q, k and v) into contiguous ones
// and add the bias in a pass of their own, the primitive reads any strides in place, adds the
// bias and applies alpha inside the product, and sums in FP32, rounding each BF16 output once.
//
// Each shape's primitive is made once per process and kept (making one JIT-compiles its kernels:
// 0.3-0.6 ms, a product's own time at the default preset); its scratchpad comes from LibTorch's
// allocator, so the step's measured peak includes it.

// The implementation oneDNN dispatches a product of `dtype` to on this CPU, as its verbose log
// names it ("brg:avx512_core_bf16", "brg:avx512_core_amx"), found by making one 256³ product's
// primitive; "none (why)" where it has none.
std::string matmulPrimitiveImplementation(at::ScalarType dtype);

// The implementations of the primitives this process has made, with how many of each: what a
// run's products ran on, strided and transposed operands included.
std::map<std::string, int64_t> matmulPrimitivesMade();

// alpha·a·b (+ bias on every row, when defined) over the last two dimensions into `out`: FP32 or
// BF16 tensors on the CPU, all of one dtype, a and b with the same batch dimensions and any
// strides, bias of b's columns, out contiguous and of the product's shape.
void primitiveMatmul(const at::Tensor &a, const at::Tensor &b, const at::Tensor &bias, float alpha, at::Tensor &out);

} // namespace optlog
