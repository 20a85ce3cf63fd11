// SPDX-License-Identifier: MIT
#include "core/engine/machine/environment.h"

#include "core/config/config.h"
#include "core/contract/inputerror.h"
#include "core/engine/machine/cudasupport.h"
#include "optlog_version.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/version.h>

#include <dlfcn.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <thread>

namespace optlog {

namespace {

template<typename Function>
Function blasSymbol(const char *name)
{
    return reinterpret_cast<Function>(dlsym(RTLD_DEFAULT, name));
}

std::string cpuInfoField(const std::string &field)
{
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(field, 0) == 0) {
            auto colon = line.find(':');
            return colon == std::string::npos ? "" : line.substr(colon + 2);
        }
    return {};
}

// The flags that decide which kernels can run; the full list is long and says little more.
std::string relevantCpuFlags()
{
    static const std::set<std::string> wanted = {"sse4_2",      "avx",      "avx2",     "fma",
                                                 "avx512f",     "avx512bw", "avx512vl", "avx512_vnni",
                                                 "avx512_bf16", "amx_bf16", "amx_tile", "avx_vnni"};
    std::istringstream flags(cpuInfoField("flags"));
    std::string flag, out;
    while (flags >> flag)
        if (wanted.count(flag))
            out += (out.empty() ? "" : " ") + flag;
    return out;
}

nlohmann::json variable(const char *name)
{
    const char *value = std::getenv(name);
    return value ? nlohmann::json(value) : nlohmann::json(nullptr); // null = unset, "" = set but empty
}

} // namespace

nlohmann::json keepTensorMemoryInHeap()
{
#ifdef __GLIBC__
    // Measured on the default preset, FP32, 2 threads, alternated: 2,850-2,970 tokens/s with
    // glibc's defaults against 4,860-5,470 with blocks kept in the heap, the same as PyTorch from
    // Python (docs/benchmarks.md). 32 MiB is the largest mmap threshold glibc accepts on 64-bit;
    // larger tensors are still mapped and unmapped.
    constexpr int kMmapThreshold = 32 << 20;
    const bool mmapSet = mallopt(M_MMAP_THRESHOLD, kMmapThreshold) == 1;
    const bool trimSet = mallopt(M_TRIM_THRESHOLD, INT_MAX) == 1;
    return {{"allocator", "glibc"},
            {"mmap_threshold_bytes", mmapSet ? nlohmann::json(kMmapThreshold) : nlohmann::json("default")},
            {"trim_threshold_bytes", trimSet ? nlohmann::json(INT_MAX) : nlohmann::json("default")}};
#else
    return {{"allocator", "not glibc: left at its defaults"}};
#endif
}

int defaultThreads()
{
    return int(std::max(1u, std::thread::hardware_concurrency()));
}

int runThreads(const RuntimeConfig &runtime)
{
    // `optlog tune`'s choice for this machine and precision, passed on by the launcher.
    const char *tuned = std::getenv("OPTLOG_TUNED_THREADS");
    const int tunedThreads = tuned ? std::atoi(tuned) : 0;
    return runtime.threads > 0 ? int(runtime.threads) : tunedThreads > 0 ? tunedThreads : defaultThreads();
}

ThreadSettings applyThreadSettings(const RuntimeConfig &runtime)
{
    ThreadSettings settings;
    settings.intraOp = runThreads(runtime);
    settings.blas = runtime.blasThreads > 0 ? int(runtime.blasThreads) : settings.intraOp;
    at::set_num_threads(settings.intraOp);
    auto setBlasThreads = blasSymbol<void (*)(int)>("openblas_set_num_threads");
    if (setBlasThreads)
        setBlasThreads(settings.blas);
    else
        settings.blas = -1;
    return settings;
}

ProductPaths runProductPaths(const RuntimeConfig &runtime, at::ScalarType compute)
{
    const char *tuned = std::getenv("OPTLOG_TUNED_GEMM");
    try {
        return productPathsFrom(runtime.gemm, compute, tuned ? tuned : "");
    } catch (const std::runtime_error &e) {
        throw InputError(std::string("config: ") + e.what());
    }
}

std::string cpuModelName()
{
    return cpuInfoField("model name");
}

std::string buildDescription()
{
    return std::string("optlog ") + OPTLOG_VERSION + " (commit " + OPTLOG_GIT_DESCRIBE + "), LibTorch " + TORCH_VERSION
           + (cuda::built() ? " (CUDA)" : " (CPU)") + ", gcc " + __VERSION__;
}

std::string machineKey()
{
    auto blasConfig = blasSymbol<char *(*) ()>("openblas_get_config");
    std::string blas = blasConfig ? std::string(blasConfig()) : "no OpenBLAS";
    // "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ... Haswell ...": the name and version only.
    const auto second = blas.find(' ', blas.find(' ') + 1);
    blas = blas.substr(0, second);
    // oneDNN's version and the ISA it dispatches to (AMX, where allowed), on which each product
    // path's speed depends, the logical CPUs this process may use (a container's or taskset's
    // share of the machine) and the OpenBLAS core in force before optlog sets one.
    return cpuInfoField("model name") + "|" + relevantCpuFlags() + "|libtorch " + TORCH_VERSION + "|" + blas + "|gemm "
           + describeOneDnn() + "|cpus " + std::to_string(defaultThreads()) + "|openblas core " + blasCoreName();
}

std::string blasCoreName()
{
    auto coreName = blasSymbol<char *(*) ()>("openblas_get_corename");
    return coreName ? coreName() : "";
}

nlohmann::json captureEnvironment(const ThreadSettings &threads, const nlohmann::json &heap)
{
    auto blasConfig = blasSymbol<char *(*) ()>("openblas_get_config");
    nlohmann::json env;
    env["optlog_version"] = OPTLOG_VERSION;
    env["optlog_git"] = OPTLOG_GIT_DESCRIBE;
    env["libtorch_version"] = TORCH_VERSION;
    env["compiler"] = std::string("gcc ") + __VERSION__;
    env["cpu_model"] = cpuInfoField("model name");
    env["cpu_flags"] = relevantCpuFlags();
    env["logical_cpus"] = std::thread::hardware_concurrency();
    env["intra_op_threads"] = threads.intraOp;
    env["blas_threads"] = threads.blas;
    env["blas"] = blasConfig ? std::string(blasConfig()) : "not OpenBLAS (no openblas_get_config symbol)";
    env["blas_core"] = blasCoreName();
    env["variables"] = {{"OPENBLAS_CORETYPE", variable("OPENBLAS_CORETYPE")},
                        {"OMP_WAIT_POLICY", variable("OMP_WAIT_POLICY")},
                        {"OMP_NUM_THREADS", variable("OMP_NUM_THREADS")},
                        {"OPENBLAS_NUM_THREADS", variable("OPENBLAS_NUM_THREADS")}};
    // Which of them optlog's launcher set (app/launcher.cpp), as opposed to the user or system.
    env["variables_set_by_optlog"] = variable("OPTLOG_SET_VARIABLES");
    env["heap"] = heap;
    // Whether the launcher applied `optlog tune`'s measured settings (app/launcher.cpp).
    const char *tuning = std::getenv("OPTLOG_TUNING");
    env["tuning"] = tuning ? tuning : "untuned: started without optlog's launcher";
    env["parallel_info"] = at::get_parallel_info();
    return env;
}

GemmCheck checkGemm(ProductPaths paths)
{
    constexpr int64_t m = 128, k = 96, n = 80;
    std::mt19937 random(7);
    std::uniform_real_distribution<float> uniform(-1, 1);
    std::vector<float> a(m * k), b(k * n);
    for (auto &x : a)
        x = uniform(random);
    for (auto &x : b)
        x = uniform(random);
    const at::Tensor product = gemmMatmul(at::from_blob(a.data(), {m, k}), at::from_blob(b.data(), {k, n}), paths);
    const float *c = product.data_ptr<float>();
    GemmCheck check;
    for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
            double expected = 0;
            for (int64_t p = 0; p < k; ++p)
                expected += double(a[i * k + p]) * double(b[p * n + j]);
            check.largestError = std::max(check.largestError, std::fabs(double(c[i * n + j]) - expected));
        }
    }
    check.correct = check.largestError < 1e-3;
    return check;
}

} // namespace optlog
