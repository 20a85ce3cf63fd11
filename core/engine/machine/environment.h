// SPDX-License-Identifier: MIT
#pragma once

#include "core/engine/kernels/gemm.h"

#include <nlohmann/json.hpp>

#include <string>

namespace optlog {

struct RuntimeConfig;

struct ThreadSettings
{
    int intraOp = 1; // LibTorch's intra-op (OpenMP) threads
    int blas = 1;    // OpenBLAS threads; -1 when the BLAS cannot be asked
};

// The intra-op threads a run takes: runtime.threads, else `optlog tune`'s for this machine and the
// run's precision (passed on by the launcher), else this machine's default.
int runThreads(const RuntimeConfig &runtime);
// Resolves runtime.threads and runtime.blas_threads (0 = this machine's default) and applies
// them to LibTorch and, when it is the BLAS in use, to OpenBLAS.
ThreadSettings applyThreadSettings(const RuntimeConfig &runtime);

// The paths of the products of a run that computes in `compute`: runtime.gemm, its "auto"
// resolved with the path `optlog tune` measured fastest for the run's precision family on this
// machine (the launcher passes it on as OPTLOG_TUNED_GEMM). Throws InputError for a path this
// build or CPU lacks.
ProductPaths runProductPaths(const RuntimeConfig &runtime, at::ScalarType compute);

// Keeps freed tensor memory in the process's heap for the next step instead of handing it back to
// the kernel (glibc's defaults mmap every block over 128 KiB and unmap it on free, so each step
// page-faults its activations in afresh). Returns what it set, for the run's environment.
nlohmann::json keepTensorMemoryInHeap();

// The default intra-op thread count: measured on the 2-core development machine (docs/tuning.md).
int defaultThreads();

// What a reader needs to reproduce a run's numbers: library versions, BLAS and its kernels,
// threads, CPU model and flags, compiler, optlog version, and the variables that steer them.
nlohmann::json captureEnvironment(const ThreadSettings &threads, const nlohmann::json &heap);

// The CPU's model name from /proc/cpuinfo: "AMD EPYC 7R13 Processor"; empty where there is none.
std::string cpuModelName();

// What `--version` prints: "optlog 0.1.0 (commit 1a2b3c4), LibTorch 1.13.0 (CPU), gcc 12.2.0".
std::string buildDescription();

// What a cached tuning is valid for: the CPU, its flags, the library versions and kernels, the
// logical CPUs this process may use, and OpenBLAS's core as the user or the system left it (read
// where optlog has set none: in `optlog tune`, and in the launcher before it sets the tuned one).
std::string machineKey();

// A GEMM with the kernels this process's BLAS chose (or oneDNN's), against a double-precision
// loop over the same random matrices. Some OpenBLAS kernels compute wrong results on some CPUs:
// `optlog tune` tries a core type only when a process started with it passes.
struct GemmCheck
{
    double largestError = 0; // absolute, over a 128 x 96 by 96 x 80 product of values in [-1, 1]
    bool correct = false;    // FP32 rounding alone stays near 1e-5; the bound is 1e-3
};
GemmCheck checkGemm(ProductPaths paths = ProductPaths::aten());

// OpenBLAS's name for the kernels it chose ("Prescott" is its generic fallback); empty when
// the BLAS in use is not OpenBLAS.
std::string blasCoreName();

} // namespace optlog
