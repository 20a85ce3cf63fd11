// SPDX-License-Identifier: MIT
#include "core/engine/machine/calibration.h"

#include "core/config/cachefile.h"
#include "core/config/config.h"
#include "core/contract/inputerror.h"
#include "core/contract/machineload.h"
#include "core/engine/kernels/gemm.h"
#include "core/engine/machine/cudasupport.h"
#include "core/engine/machine/device.h"
#include "core/engine/machine/environment.h"
#include "core/engine/memory/countingallocator.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <vector>

namespace optlog {

namespace {

using Clock = std::chrono::steady_clock;

// GFLOP/s of a @ b, repeated for at least `seconds` after one untimed warm-up product.
double gemmGflops(const at::Tensor &a, const at::Tensor &b, double seconds, ProductPath path)
{
    const ProductPaths paths{path, path};
    at::Tensor out = gemmMatmul(a, b, paths); // warm-up: thread pool, packing buffers, page faults
    const double flops = 2.0 * double(a.size(0)) * double(a.size(1)) * double(b.size(1));
    int64_t repeats = 0;
    synchronize(a.device());
    const auto start = Clock::now();
    double elapsed = 0;
    do {
        if (path == ProductPath::ATen)
            at::matmul_out(out, a, b);
        else
            out = gemmMatmul(a, b, paths);
        ++repeats;
        // A GPU queues the product and returns: time what it has done, in batches of ten.
        if (a.is_cuda() && repeats % 10 != 0)
            continue;
        synchronize(a.device());
        elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    } while (elapsed < seconds);
    return flops * double(repeats) / elapsed / 1e9;
}

// Square GEMMs large enough for the kernels to run at their best on this machine, whatever the
// model: the same denominator for every run of a dtype (a CPU's rate stops growing well before
// 2048, a GPU's before 8192).
std::vector<int64_t> peakSizes(bool cuda)
{
    return cuda ? std::vector<int64_t>{4096, 8192} : std::vector<int64_t>{1024, 2048};
}

std::string shapesOf(bool cuda)
{
    std::string shapes;
    for (const int64_t n : peakSizes(cuda))
        shapes += (shapes.empty() ? "square " : ", ") + std::to_string(n);
    return shapes;
}

// The paths a product of `dtype` can take here: on a CPU each that `optlog tune` may choose
// (productPathCandidates), on a GPU LibTorch's.
std::vector<ProductPath> pathsFor(at::ScalarType dtype, c10::Device device)
{
    return device.is_cpu() ? productPathCandidates(dtype) : std::vector<ProductPath>{ProductPath::ATen};
}

// A product this many times longer than a shape's time budget is one with no fast kernel here.
constexpr double kSlowProduct = 5;

// Each path's best rate over the sizes, each the best of three timings after its warm-up. A path
// whose one product outlasts the budget kSlowProduct times over (a dtype without a kernel on this
// CPU: BF16 at 1 GFLOP/s on an AVX2 EPYC, 2 s for 1024 squared) is timed no more: its rate does
// not grow with the size, and the larger sizes and timings took a first run 6.5 min there.
std::map<std::string, double> squareGflopsByPath(at::ScalarType dtype, c10::Device device, double secondsPerShape)
{
    const auto options = at::TensorOptions().dtype(dtype).device(device);
    std::map<std::string, double> best;
    std::set<std::string> slow;
    for (const int64_t n : peakSizes(device.is_cuda())) {
        const at::Tensor a = at::rand({n, n}, options);
        const at::Tensor b = at::rand({n, n}, options);
        const double flops = 2.0 * double(n) * double(n) * double(n);
        for (const ProductPath path : pathsFor(dtype, device)) {
            const std::string name = pathName(path);
            for (int timing = 0; timing < 3 && slow.count(name) == 0; ++timing) {
                const double gflops = gemmGflops(a, b, secondsPerShape, path);
                best[name] = std::max(best[name], gflops);
                if (flops / (gflops * 1e9) > kSlowProduct * secondsPerShape)
                    slow.insert(name);
            }
        }
    }
    return best;
}

double bestOf(const std::map<std::string, double> &rates)
{
    double best = 0;
    for (const auto &[path, gflops] : rates)
        best = std::max(best, gflops);
    return best;
}

} // namespace

double MatmulPeak::gflops(at::ScalarType dtype, bool tf32, ProductPath path) const
{
    const auto rates = pathGflops.find(dtype == at::kBFloat16 ? "bfloat16"
                                       : dtype == at::kHalf   ? "float16"
                                                              : "float32");
    if (rates != pathGflops.end()) {
        const auto rate = rates->second.find(pathName(path));
        if (rate != rates->second.end())
            return rate->second;
    }
    return gflops(dtype, tf32);
}

double MatmulPeak::gflops(at::ScalarType dtype, bool tf32) const
{
    switch (dtype) {
    case at::kFloat: return tf32 ? tfloat32Gflops : float32Gflops;
    case at::kBFloat16: return bfloat16Gflops;
    case at::kHalf: return float16Gflops;
    default: return 0;
    }
}

nlohmann::json MatmulPeak::toJson() const
{
    if (!notMeasured.empty())
        return {{"not_measured", notMeasured}};
    nlohmann::json out = {{"float32_gflops", float32Gflops},
                          {"bfloat16_gflops", bfloat16Gflops},
                          {"shapes", shapes},
                          {"from_cache", fromCache},
                          {"seconds", seconds}};
    if (remeasured)
        out["remeasured"] = true;
    if (!busy.empty())
        out["busy"] = busy;
    if (float16Gflops > 0)
        out["float16_gflops"] = float16Gflops;
    if (tfloat32Gflops > 0)
        out["tfloat32_gflops"] = tfloat32Gflops;
    if (!pathGflops.empty())
        out["path_gflops"] = pathGflops;
    return out;
}

bool matmulPeakWanted()
{
    const char *setting = std::getenv("OPTLOG_MATMUL_PEAK");
    if (!setting || std::string(setting) == "1")
        return true;
    if (std::string(setting) == "0")
        return false;
    throw InputError("OPTLOG_MATMUL_PEAK=\"" + std::string(setting)
                     + "\": expected 0 (measure no matmul peak) or 1 (measure it, as when unset)");
}

int64_t matmulPeakBytes(const RunConfig &config)
{
    const int64_t n = peakSizes(runDevice(config).is_cuda()).back();
    return 3 * n * n * int64_t(sizeof(float));
}

PeakMachine PeakMachine::of(c10::Device device, int threads)
{
    if (!device.is_cuda())
        return {false, "", "", threads};
    return {true, optlog::deviceName(device), nvidiaDriverVersion(), threads};
}

std::string matmulPeakKey(const PeakMachine &machine)
{
    const nlohmann::json env = captureEnvironment({machine.threads, machine.threads}, nlohmann::json::object());
    const std::string machineAndLibraries = env.value("cpu_model", "") + "|" + env.value("cpu_flags", "") + "|"
                                            + env.value("libtorch_version", "");
    if (machine.cuda)
        return machineAndLibraries + "|" + shapesOf(true) + "|" + machine.deviceName + "|driver " + machine.driver;
    // What a CPU's kernels' speed depends on: the libraries, the threads and how idle OpenMP workers
    // wait (`optlog tune` sets OMP_WAIT_POLICY per precision); not the model.
    const char *waitPolicy = std::getenv("OMP_WAIT_POLICY");
    return machineAndLibraries + "|" + env.value("blas_core", "") + "|threads=" + std::to_string(machine.threads)
           + "|OMP_WAIT_POLICY=" + (waitPolicy ? waitPolicy : "") + "|" + shapesOf(false) + "|gemm paths of "
           + describeOneDnn();
}

namespace {

std::string peakCachePath(const std::string &cacheFile)
{
    return cacheFile.empty() ? cacheFilePath("matmul-peak.json") : cacheFile;
}

// The usable peak under `key` in a cache file's contents; nothing where there is none.
std::optional<MatmulPeak> peakIn(const nlohmann::json &cache, const std::string &key, bool cuda)
{
    if (!cache.contains(key))
        return std::nullopt;
    const auto &entry = cache[key];
    MatmulPeak peak;
    peak.key = key;
    peak.shapes = shapesOf(cuda);
    peak.float32Gflops = entry.value("float32_gflops", 0.0);
    peak.bfloat16Gflops = entry.value("bfloat16_gflops", 0.0);
    peak.float16Gflops = entry.value("float16_gflops", 0.0);
    peak.tfloat32Gflops = entry.value("tfloat32_gflops", 0.0);
    peak.pathGflops = entry.value("path_gflops", decltype(peak.pathGflops)());
    // A GPU's entry from before TF32 was measured is no peak of today's.
    if (peak.float32Gflops <= 0 || (cuda && peak.tfloat32Gflops <= 0))
        return std::nullopt;
    peak.fromCache = true;
    return peak;
}

// Each rate of `a` and `b`, the better; the rest of `a`.
MatmulPeak betterOf(MatmulPeak a, const MatmulPeak &b)
{
    a.float32Gflops = std::max(a.float32Gflops, b.float32Gflops);
    a.bfloat16Gflops = std::max(a.bfloat16Gflops, b.bfloat16Gflops);
    a.float16Gflops = std::max(a.float16Gflops, b.float16Gflops);
    a.tfloat32Gflops = std::max(a.tfloat32Gflops, b.tfloat32Gflops);
    for (auto &[dtype, rates] : a.pathGflops)
        for (auto &[path, gflops] : rates)
            if (b.pathGflops.count(dtype) && b.pathGflops.at(dtype).count(path))
                gflops = std::max(gflops, b.pathGflops.at(dtype).at(path));
    return a;
}

} // namespace

std::optional<MatmulPeak> cachedMatmulPeak(const PeakMachine &machine, const std::string &cacheFile)
{
    return peakIn(readJsonCache(peakCachePath(cacheFile)), matmulPeakKey(machine), machine.cuda);
}

// The matmul peak of the machine the trainer ran on, as the engine cached it: on a
// CPU at the trainer's threads, on a GPU the GPU its environment names. Where none is cached it
// says how to measure one, for the runs recorded after.
nlohmann::json recordedMatmulPeak(const nlohmann::json &environment)
{
    const std::string device = environment.value("device_name", std::string("cpu"));
    PeakMachine machine;
    machine.cuda = device != "cpu";
    machine.deviceName = device;
    machine.driver = environment.value("driver", std::string());
    machine.threads = environment.value("intra_op_threads", 0);
    if (machine.cuda || machine.threads > 0)
        if (const std::optional<MatmulPeak> peak = cachedMatmulPeak(machine))
            return peak->toJson();
    const std::string measure = machine.cuda ? "optlog tune --peak-only --device cuda"
                                             : "optlog tune --peak-only --threads " + std::to_string(machine.threads);
    return {{"not_measured", "no matmul peak is cached for this machine (" + device
                                 + (machine.cuda ? "" : " at " + std::to_string(machine.threads) + " threads") + "): `"
                                 + measure + "` measures it, for the runs recorded after"}};
}

MatmulPeak matmulPeak(const RunConfig &config, int threads, const std::string &cacheFile, double secondsPerShape,
                      ObservedRate observed)
{
    const c10::Device device = runDevice(config);
    const PeakMachine machine = PeakMachine::of(device, threads);
    MatmulPeak peak;
    peak.key = matmulPeakKey(machine);
    peak.shapes = shapesOf(machine.cuda);
    const std::string path = peakCachePath(cacheFile);
    if (std::optional<MatmulPeak> cached = peakIn(readJsonCache(path), peak.key, machine.cuda)) {
        if (observed.gflops <= observed.margin * cached->gflops(observed.dtype, observed.tf32, observed.path))
            return *cached;
        peak = *cached;
        peak.fromCache = false;
        peak.remeasured = true;
    }
    const MatmulPeak cached = peak; // zero where nothing usable was cached
    // The machine's, not the run's: its matrices neither count towards a run's peak nor meet its
    // memory budget.
    const CountingAllocator::Uncounted uncounted;
    const auto start = Clock::now();
    const MachineLoad load = measureWhileQuiet(kPeakAttempts, [&](int attempt) {
        MatmulPeak measured = cached;
        {
            const Tf32Guard ieee(false); // FP32's peak is FP32's, whatever the run's precision.tf32
            measured.pathGflops["float32"] = squareGflopsByPath(at::kFloat, device, secondsPerShape);
        }
        measured.pathGflops["bfloat16"] = squareGflopsByPath(at::kBFloat16, device, secondsPerShape);
        measured.float32Gflops = bestOf(measured.pathGflops["float32"]);
        measured.bfloat16Gflops = bestOf(measured.pathGflops["bfloat16"]);
        if (device.is_cuda()) {
            measured.pathGflops.clear(); // one path, LibTorch's
            measured.float16Gflops = bestOf(squareGflopsByPath(at::kHalf, device, secondsPerShape));
            const Tf32Guard tf32(true);
            measured.tfloat32Gflops = bestOf(squareGflopsByPath(at::kFloat, device, secondsPerShape));
            cuda::releaseCachedMemory(); // else the run's reserved peak would start with these matrices
        }
        // The peak is the best rate measured: a measurement at a busy hour does not lower it.
        peak = attempt == 1 ? measured : betterOf(peak, measured);
        return true;
    });
    peak.busy = load.busy() ? load.describe() : "";
    peak.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    peak = betterOf(peak, cached);
    if (!peak.busy.empty())
        return peak; // this run's; the machine's stays what a quiet measurement found
    // Into the file as it is now: other runs may have added their machines' peaks while this one measured.
    const nlohmann::json entry = {{"float32_gflops", peak.float32Gflops}, {"bfloat16_gflops", peak.bfloat16Gflops},
                                  {"float16_gflops", peak.float16Gflops}, {"tfloat32_gflops", peak.tfloat32Gflops},
                                  {"path_gflops", peak.pathGflops},       {"measured_seconds", peak.seconds}};
    updateJsonCache(path, [&](nlohmann::json &cache) { cache[peak.key] = entry; });
    return peak;
}

double referenceKernelGflops(at::ScalarType dtype, c10::Device device, ProductPaths paths)
{
    // oneDNN's BF16 matmul allocates scratch memory through LibTorch: not the run's either.
    const CountingAllocator::Uncounted uncounted;
    // A GPU needs larger and more products per timing for the launch cost not to dominate.
    const int64_t n = device.is_cuda() ? 2048 : 512;
    const int repeats = device.is_cuda() ? 20 : 2;
    constexpr int timings = 3;
    // The matrices live outside LibTorch's allocators, made once per dtype and device; with the
    // scope above the index neither raises a run's measured peak nor meets its memory budget.
    static std::map<std::pair<at::ScalarType, std::string>, std::vector<at::Tensor>> matrices;
    std::vector<at::Tensor> &m = matrices[{dtype, device.str()}];
    if (m.empty()) {
        const size_t floats = size_t(3 * n * n); // room for three float matrices, enough for any 16-bit one
        void *storage = nullptr;
        if (device.is_cuda()) {
            storage = cuda::allocateOutsideCache(floats * sizeof(float));
        } else {
            static std::map<at::ScalarType, std::vector<float>> hostStorage;
            std::vector<float> &values = hostStorage[dtype];
            values.assign(floats, 0.0f);
            storage = values.data();
        }
        const auto options = at::TensorOptions().dtype(dtype).device(device);
        for (int k = 0; k < 3; ++k)
            m.push_back(at::from_blob(static_cast<float *>(storage) + k * n * n, {n, n}, options));
        m[0].fill_(0.5);
        m[1].fill_(0.25);
    }
    at::Tensor &out = m[2];
    // oneDNN writes a new product (1 MiB, uncounted above); ATen's goes into `out`.
    const auto product = [&] {
        if (paths.of(dtype) == ProductPath::ATen || !device.is_cpu())
            at::matmul_out(out, m[0], m[1]);
        else
            gemmMatmul(m[0], m[1], paths);
    };
    product(); // wakes the threads the step's other kernels left asleep
    synchronize(device);
    // The best of a few short timings: one interruption is not the machine slowing down, a
    // neighbour that stays is.
    double best = 0;
    for (int t = 0; t < timings; ++t) {
        const auto start = Clock::now();
        for (int i = 0; i < repeats; ++i)
            product();
        synchronize(device);
        const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
        best = std::max(best, 2.0 * double(n * n * n) * repeats / seconds / 1e9);
    }
    return best;
}

} // namespace optlog
