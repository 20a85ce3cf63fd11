// SPDX-License-Identifier: MIT
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>

namespace optlog {

// Which library computes the engine's FP32 matrix products on the CPU. LibTorch 1.13 sends FP32
// products to the BLAS (here OpenBLAS, whose kernel the system pins to Haswell's AVX2) and only
// BF16 ones to oneDNN; oneDNN's own sgemm, which LibTorch already links, runs this machine's
// widest kernels on LibTorch's OpenMP threads (docs/benchmarks.md has the side-by-side numbers).
enum class GemmLibrary {
    ATen,   // whatever LibTorch calls: the reference, and every case oneDNN does not take
    OneDnn, // oneDNN's sgemm for FP32 CPU tensors outside autocast, its matmul primitive for BF16
};

// runtime.gemm ("auto", "onednn", "aten") for this build; throws when "onednn" is asked of a build
// without it, naming what would be right.
GemmLibrary gemmLibraryFrom(const std::string &setting);
bool oneDnnGemmBuilt();
// Whether oneDNN's path computes BF16 products here in FP32 arithmetic, where oneDNN may not use
// AVX-512 (BW, VL, DQ: the CPU lacks it, or ONEDNN_MAX_CPU_ISA caps it): there oneDNN 2.6 has no
// BF16 matmul, and LibTorch 1.13 runs a scalar one-thread kernel, about 30x slower than FP32
// (docs/benchmarks.md). Operands are widened to FP32 exactly and each sum is rounded to BF16 once,
// as oneDNN's own BF16 product rounds its FP32 sums. With AVX-512, BF16 products run on oneDNN's
// matmul primitive (bf16matmul.h).
bool bf16ProductsWidened();
// "onednn 2.6.3, bf16 matmul brg:avx512_core_bf16", "onednn 2.6.3, bf16 widened" or "aten": what a
// run's environment records.
std::string describe(GemmLibrary library);

// y = x·Wᵀ + b over x's last dimension (bias may be undefined), as at::linear.
at::Tensor gemmLinear(const at::Tensor &x, const at::Tensor &weight, const at::Tensor &bias, GemmLibrary library);

// alpha·a·b over the last two dimensions, as at::matmul for operands of the same batch shape (no
// broadcasting). Either operand may be a transposed or strided view, as attention's q, k and v
// are: oneDNN reads them in place where at::matmul would first copy them, and applies alpha
// (attention's 1/√D) inside its products, forward and backward, without a pass of its own.
at::Tensor gemmMatmul(const at::Tensor &a, const at::Tensor &b, GemmLibrary library, double alpha = 1.0);

// How many FP32 products have run on padded copies of rows stored 4 KiB apart (gemm.cpp says when
// and why) in this process: for tests and benchmarks to see that the path was taken.
int64_t paddedProductCount();
// How many BF16 products oneDNN's path (the matmul primitive, or widened) has computed in this
// process: for tests to see that LibTorch's own BF16 products were not used.
int64_t bf16ProductCount();

} // namespace optlog
