// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace optlog {

// A CUDA chip's compute capability: 9.0 for Hopper (H100, H200).
struct ComputeCapability
{
    int major = 0, minor = 0;
    std::string text() const; // "9.0"
    // "9.0" or "sm_90"; nothing for anything else.
    static std::optional<ComputeCapability> parse(const std::string &text);
};

// Which ops autocast runs in the 16-bit dtype and which in FP32 differs by device: PyTorch's
// "Automatic Mixed Precision" reference lists them per device. What the memory model follows:
// - CPU: matmul-class ops in the 16-bit dtype; softmax, GELU, LayerNorm's output on their input's
//   dtype (LibTorch 1.13's and 2.x's CPU lists alike, checked against the counting allocator).
// - CUDA: softmax, log_softmax, layer_norm, exp, sum and the losses in FP32 (the reference's "CUDA
//   Ops that can autocast to float32", as of 2.x): naive attention's softmax output is saved in
//   FP32, and the second product saves its own 16-bit copy of it.
enum class AutocastOps { Cpu, Cuda };

// What one rank's memory owes to its device beyond the model's tensors, and where each figure
// comes from: the memory model's device terms (docs/memory-model.md, "Device terms").
struct DeviceTerms
{
    std::string device = "cpu";                  // runtime.device
    std::string chip;                            // "AMD EPYC 7R13", "NVIDIA H200"; empty: not known here
    std::optional<ComputeCapability> capability; // CUDA: what the workspaces depend on; none: not known
    std::string libtorchVersion;                 // of the LibTorch the figures follow
    AutocastOps autocastOps = AutocastOps::Cpu;
    // That LibTorch has scaled_dot_product_attention: what memory.attention = "auto" resolves with.
    // The engine says it of its own (compat::hasFusedAttention), a recorded run's trainer of its
    // PyTorch; not known, it is assumed, as a GPU is used through a recent PyTorch.
    bool hasSdpa = true;
    bool boolDropoutMasks = false;      // CUDA's fused dropout keeps a 1-byte mask; the CPU's, one in the input's dtype
    int64_t cublasWorkspaceBytes = 0;   // per handle and stream, taken through the caching allocator
    int64_t cublasLtWorkspaceBytes = 0; // per handle and stream; 0 where it shares cuBLAS's
    int blasHandles = 0;                // threads that run products, each with its own handle
    int64_t allocationGranuleBytes = 1; // the allocator rounds each block up to a multiple of this
    // Scratch a 16-bit product's kernel books through the allocator while it runs, as measured on
    // this machine's BF16 path at the run's threads: oneDNN's BF16 matmul where the CPU has AVX-512
    // but no native BF16 ("gemm:jit", Ice Lake) accumulates in FP32. Bytes per element of a single
    // product's output (oneDNN 2.6 books a copy per thread: 8 on two threads; 3.x one: 4), and per
    // element of one matrix of a batched product for each thread at work (one matrix each: 4).
    // Kernels that keep their accumulators in tiles (brgemm on AVX-512 BF16 or AMX, LibTorch's
    // scalar one) book none.
    double bf16ProductScratchBytes = 0;
    double bf16BatchScratchBytes = 0;
    int productThreads = 1;      // the run's intra-op threads, which the scratch was measured on
    std::string workspaceSource; // how the workspaces were sized: the variables and defaults used
    // What cannot be known on this machine (no GPU here: which chip); the figures then take the
    // larger choice and say so.
    std::vector<std::string> unknown;
    bool onThisMachine = true; // false: runtime.device names a GPU this machine lacks (no calibration)

    // Every handle's workspaces: held from the first product of each thread to the process's end.
    int64_t workspaceBytes() const;
    // Bytes of scratch a 16-bit product of `batches` matrices of `outputElements` each books: a
    // single one as measured, a batch one matrix per thread at work.
    double bf16ProductScratch(double outputElements, double batches = 1) const;
    // Bytes the allocator's rounding adds to tensors of these sizes.
    int64_t roundingBytes(const std::vector<int64_t> &tensorBytes) const;
    // "cuda, NVIDIA H200 (compute capability 9.0), LibTorch 2.11.0"
    std::string describe() const;
};

// The environment variables that size CUDA's workspaces, by name: getenv by default.
using EnvironmentLookup = std::function<std::optional<std::string>(const std::string &name)>;
EnvironmentLookup processEnvironment();

// The CPU: its allocator (optlog's counting allocator) rounds nothing, products take no workspace
// through it (OpenBLAS's and oneDNN's sgemm scratch is outside it: the peak RSS shows it), except
// the scratchpad of oneDNN's matmul, which optlog's primitive and LibTorch's ideep both take from
// LibTorch's allocator: `scratch` as the engine measured it on `productThreads` threads (the
// run's intra-op threads; deviceTermsOf).
struct Bf16ProductScratch
{
    double singleBytes = 0; // per element of a single product's output
    double batchBytes = 0;  // per element of one matrix of a batch, per thread at work
};
DeviceTerms cpuDeviceTerms(const std::string &chip, const std::string &libtorchVersion, Bf16ProductScratch scratch = {},
                           int productThreads = 1);

// CUDA, as LibTorch 2.x's CublasHandlePool.cpp sizes it (checked against 2.11's):
// - cuBLAS: CUBLAS_WORKSPACE_CONFIG (":SIZE_KiB:COUNT" pairs, summed), else 32 MiB on compute
//   capability 9.0 (PyTorch PR 89027) and 4096 KiB x 2 + 16 KiB x 8 on any other chip;
// - cuBLASLt: CUBLASLT_WORKSPACE_SIZE KiB, else 1024 KiB, at most cuBLAS's; a pool of its own
//   unless TORCH_CUBLASLT_UNIFIED_WORKSPACE=1 makes it share cuBLAS's;
// - both per handle and stream, a handle per thread: the forward's, and autograd's device thread
//   that runs backward;
// - the caching allocator rounds every block up to 512 bytes (c10 AllocatorConfig.h's kMinBlockSize),
//   and its allocated-bytes statistics, the peak, count the rounded blocks.
// Without a capability (no GPU here) the chip is unknown: the larger default (Hopper's) is taken
// and named in `unknown`.
DeviceTerms cudaDeviceTerms(std::optional<ComputeCapability> capability, const std::string &chip,
                            const std::string &libtorchVersion, const EnvironmentLookup &environment);

// The terms a process that does not ask the device assumes for `config`'s runtime.device: the CPU's
// for "cpu" (chip not named), CUDA's with an unknown chip for "cuda".
DeviceTerms assumedDeviceTerms(const RunConfig &config);

} // namespace optlog
