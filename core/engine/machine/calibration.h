// SPDX-License-Identifier: MIT
#pragma once

#include "core/engine/kernels/gemm.h"

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace optlog {

struct RunConfig;

// The matmul throughput this machine reaches with the threads in use: the denominator of model
// FLOP utilisation, the same for every run of a dtype on the machine. Measured once per machine,
// library versions, threads and OpenMP wait policy, then read from a cache file.
struct MatmulPeak
{
    double float32Gflops = 0;
    double bfloat16Gflops = 0;
    double float16Gflops = 0;  // CUDA only: the CPU has no FP16 matmul in LibTorch 1.13
    double tfloat32Gflops = 0; // CUDA only: FP32 products in TF32 (precision.tf32)
    std::string shapes;        // "square 1024, 2048": the GEMMs measured
    std::string key;           // what the cache entry is keyed by
    bool fromCache = false;
    bool remeasured = false; // the cached entry was beaten by the run's own kernels (below)
    double seconds = 0;      // what measuring took (0 from the cache)
    std::string notMeasured; // why no peak was measured (matmulPeakWanted()); empty when one was
    // Not empty when every attempt found the machine busy (MachineLoad::describe()): the peak is
    // this run's only, never cached as the machine's.
    std::string busy;
    // On a CPU, each product path's rate ("float32" -> {"sgemm": 512, "aten": 190, ...}); a
    // dtype's peak above is the best of its paths'.
    std::map<std::string, std::map<std::string, double>> pathGflops;

    // The peak of a compute dtype (FP32, BF16, FP16; FP32 in TF32 where `tf32`); 0 for another.
    double gflops(at::ScalarType dtype, bool tf32 = false) const;
    // The peak of `dtype`'s products on `path`, where it was measured (a CPU's); else gflops(dtype, tf32).
    double gflops(at::ScalarType dtype, bool tf32, ProductPath path) const;
    nlohmann::json toJson() const;
};

// The index's 512³ product stays below the peak's larger squares on an idle machine, but not by
// much: 86-93% of FP32's peak and 94-100% of BF16's (widened) on an AVX2 EPYC.
inline constexpr double kStalePeakMargin = 1.05;

// A rate the run's own kernels reached just now in its compute dtype: the machine-speed index; or
// a whole run's model rate once it ended.
struct ObservedRate
{
    at::ScalarType dtype = at::kFloat;
    double gflops = 0;
    bool tf32 = false;                    // FP32 products in TF32 (CUDA)
    ProductPath path = ProductPath::ATen; // the run's path for its dtype (a CPU's)
    // How far above the cached peak `gflops` may be before the peak is measured again: the
    // index's product comes close to the peak; a whole run's rate (its other ops too) never should.
    double margin = kStalePeakMargin;
};

// Whether a run measures the peak: unless OPTLOG_MATMUL_PEAK=0, which a run whose rates are not
// the machine's sets. Under Valgrind (tools/valgrind-optlog.sh) the squares took over 25 minutes
// before the first step; such a run stores why it has no peak, and shows no MFU. Throws InputError
// for a value other than 0 or 1.
bool matmulPeakWanted();

// What a matmul peak is measured on, as its cache entry is keyed, besides this machine's CPU and
// LibTorch: on a CPU the threads (and OMP_WAIT_POLICY, read from the environment); on a GPU the
// GPU by name and driver, whatever the CPU's threads. `optlog record` names a recorded run's GPU
// from its environment, so it never opens the GPU its trainer is using.
struct PeakMachine
{
    bool cuda = false;
    std::string deviceName; // the GPU's, as CUDA names it
    std::string driver;     // the NVIDIA driver's version
    int threads = 1;
    static PeakMachine of(c10::Device device, int threads);
};
std::string matmulPeakKey(const PeakMachine &machine);
// The peak cached for `machine`, where one was measured (`cacheFile` as below); nothing otherwise.
std::optional<MatmulPeak> cachedMatmulPeak(const PeakMachine &machine, const std::string &cacheFile = "");
// The peak cached for the machine a recorded run's environment describes (`optlog record`,
// recordedstream.h's MatmulPeakOf): a CPU at the trainer's threads, or the GPU it names. Where
// none is cached, {"not_measured": how to measure one, for the runs recorded after}.
nlohmann::json recordedMatmulPeak(const nlohmann::json &environment);

// `cacheFile` empty: $XDG_CACHE_HOME/optlog/matmul-peak.json, else ~/.cache/optlog/....
// Measured on the config's runtime.device with square GEMMs (1024 and 2048 on a CPU, 4096 and
// 8192 on a GPU), each timed three times for at least `secondsPerShape` after a warm-up; the
// best rate is the peak. Its matrices are outside the counting allocator (no run's memory).
// A cached peak that `observed` beats by more than kStalePeakMargin was measured while the machine
// was busier than now (on a shared machine a cached 153 GFLOP/s FP32 stood against 191 measured
// anew, and every run's MFU read high): it is measured again, and the entry keeps the better of
// the two measurements of each dtype. A measurement during which other processes took the
// machine (MachineLoad::busy()) is taken again after a pause, up to kPeakAttempts in all; if
// every attempt was busy, the best is returned marked `busy` and nothing is cached.
MatmulPeak matmulPeak(const RunConfig &config, int threads, const std::string &cacheFile = "",
                      double secondsPerShape = 0.15, ObservedRate observed = {});
inline constexpr int kPeakAttempts = 2; // a measurement takes 7-40 s on a 2-core CPU: one more, not many
// The memory measuring matmulPeak() takes when it is not cached: its largest GEMM's matrices.
int64_t matmulPeakBytes(const RunConfig &config);

// A fixed matmul, timed: the machine-speed index. A change in it during a run is the machine
// changing under the run (a neighbour, thermal limits), not the technique. On a CPU six 512^3
// products in three timings (the best counts), about 10 ms; on a GPU sixty 2048^3 ones. Its
// matrices are outside LibTorch's allocators (the CPU's, and CUDA's caching one), so it never
// adds to a run's peak or meets its budget. `dtype` and `paths` should be the run's: on a CPU
// its kernels then use the same thread pool as the run's (OpenBLAS for ATen's FP32, OpenMP's
// workers for oneDNN's), so the run's own idle threads do not disturb the timing.
double referenceKernelGflops(at::ScalarType dtype = at::kFloat, c10::Device device = c10::Device(c10::DeviceType::CPU),
                             ProductPaths paths = ProductPaths::aten());

} // namespace optlog
