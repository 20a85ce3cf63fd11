// SPDX-License-Identifier: MIT
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace optlog {

// The kernels that compute the engine's FP32 and BF16 matrix products on the CPU. Each is the
// fastest on some machine, and no CPU flag says which: LibTorch 1.13 sends FP32 products to the
// BLAS (here OpenBLAS, whose kernel the system pins to Haswell's AVX2) where oneDNN's sgemm runs
// the widest kernels (docs/benchmarks.md), and on an Intel Xeon with AMX LibTorch's own BF16
// products ran twice as fast as the matmul primitive. `optlog tune` measures the paths a machine
// has and keeps the fastest per precision family (docs/tuning.md).
enum class ProductPath {
    ATen,      // whatever LibTorch calls: the reference, and every case oneDNN's paths do not take
    Sgemm,     // oneDNN's sgemm; BF16 operands widened to FP32 a tile at a time
    Primitive, // oneDNN's matmul primitive, which reads strided operands in place
};

std::string pathName(ProductPath path); // "aten", "sgemm", "primitive"
std::optional<ProductPath> pathNamed(const std::string &name);

// The path of each dtype's CPU products in a run (a GPU's are always LibTorch's).
struct ProductPaths
{
    ProductPath float32 = ProductPath::ATen;
    ProductPath bfloat16 = ProductPath::ATen;

    static ProductPaths aten() { return {}; }
    // oneDNN's where nothing was measured: sgemm for FP32, the primitive for BF16 (sgemm, widened,
    // where oneDNN has no BF16 matmul); ATen's in a build without oneDNN.
    static ProductPaths onednn();

    ProductPath of(at::ScalarType dtype) const { return dtype == at::kBFloat16 ? bfloat16 : float32; }
    bool operator==(const ProductPaths &other) const { return float32 == other.float32 && bfloat16 == other.bfloat16; }
};

bool oneDnnGemmBuilt();
// Lets oneDNN use AMX where the CPU has it (onednncpu.h): once per process, before anything
// (LibTorch's own BF16 products included) makes oneDNN choose its kernels. Nothing without oneDNN.
void allowAmx();
// Whether oneDNN has a BF16 matmul here: it needs AVX-512 (BW, VL, DQ), which the CPU may lack or
// ONEDNN_MAX_CPU_ISA may cap. Without it LibTorch 1.13's BF16 products are a scalar one-thread
// kernel, about 30x slower than FP32 (docs/benchmarks.md), and BF16 products run on sgemm, widened.
bool bf16PrimitiveAvailable();

// The paths this build and CPU can compute products of `dtype` on, the default first: what
// `optlog tune` times. ATen's BF16 products only where oneDNN has a BF16 matmul.
std::vector<ProductPath> productPathCandidates(at::ScalarType dtype);

// runtime.gemm for a run whose products are of `compute`: "auto" is `tuned` (the path `optlog
// tune` measured fastest for the run's family here, passed on by the launcher; empty where none)
// for that dtype and the defaults for the other; "onednn" the defaults; "aten", "sgemm" and
// "primitive" that path for both. Throws std::runtime_error for a path this build or CPU lacks,
// naming what would be right.
ProductPaths productPathsFrom(const std::string &setting, at::ScalarType compute, const std::string &tuned = "");

// The kernels or ISA products of `dtype` reach on `path` here: "oneDNN 2.6.3, brg:avx512_core_amx"
// (the primitive's kernel, or the one oneDNN's log names for LibTorch's own BF16 products: this
// runs one), "oneDNN 2.6.3, avx512_core_bf16" (sgemm: the ISA oneDNN dispatches to), or "LibTorch's
// BLAS" (ATen's FP32 products; the run's environment names the BLAS and its core).
std::string kernelsReached(ProductPath path, at::ScalarType dtype);
// The kernel oneDNN's matmul primitive runs products of `dtype` on here ("gemm:jit",
// "brg:avx512_core_bf16"); empty in a build without oneDNN. Its scratchpad comes from LibTorch's
// allocator, and the engine measures it for the memory model (deviceTermsOf).
std::string primitiveKernel(at::ScalarType dtype);
// "primitive (oneDNN 2.6.3, brg:avx512_core_bf16)", "sgemm, widened (...)": the path and what it reaches.
std::string describePath(ProductPath path, at::ScalarType dtype);
// The paths this build has, and why: all three where LibTorch links the system's oneDNN (Debian's),
// ATen's alone where it hides its own inside libtorch_cpu (a PyPI wheel's). `optlog tune` says it.
std::string describeBuildPaths();
// "oneDNN 2.6.3, avx512_core_bf16, AMX not on this CPU", or "no oneDNN": what a tuning and a
// matmul peak measured here are valid for.
std::string describeOneDnn();

// The kernels of the matmul primitives this process has made, with how many primitives chose
// each ({"brg:avx512_core_amx": 14}): what a run's products ran on. Empty without oneDNN.
std::map<std::string, int64_t> primitiveKernelsMade();

} // namespace optlog
