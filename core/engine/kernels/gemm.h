// SPDX-License-Identifier: MIT
#pragma once

#include "core/engine/kernels/productpaths.h"

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace optlog {

// The engine's matrix products on the CPU, each on the path of its dtype (productpaths.h).

// y = x·Wᵀ + b over x's last dimension (bias may be undefined), as at::linear.
at::Tensor gemmLinear(const at::Tensor &x, const at::Tensor &weight, const at::Tensor &bias, ProductPaths paths);

// alpha·a·b over the last two dimensions, as at::matmul for operands of the same batch shape (no
// broadcasting). Either operand may be a transposed or strided view, as attention's q, k and v
// are: oneDNN reads them in place where at::matmul would first copy them, and applies alpha
// (attention's 1/√D) inside its products, forward and backward, without a pass of its own.
at::Tensor gemmMatmul(const at::Tensor &a, const at::Tensor &b, ProductPaths paths, double alpha = 1.0);

// How many FP32 products have run on padded copies of rows stored 4 KiB apart (gemm.cpp says when
// and why) in this process: for tests and benchmarks to see that the path was taken.
int64_t paddedProductCount();
// How many BF16 products oneDNN's paths (the matmul primitive, or sgemm widened) have computed in
// this process: for tests to see that LibTorch's own BF16 products were not used.
int64_t bf16ProductCount();

} // namespace optlog
