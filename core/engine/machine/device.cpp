// SPDX-License-Identifier: MIT
#include "core/engine/machine/device.h"

#include "core/config/config.h"
#include "core/engine/compat/torchcompat.h"
#include "core/engine/kernels/gemm.h"
#include "core/engine/kernels/productpaths.h"
#include "core/engine/machine/cudasupport.h"
#include "core/engine/machine/environment.h"
#include "core/engine/memory/countingallocator.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/ops/ones.h>
#include <torch/cuda.h>
#include <torch/version.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <fstream>
#include <map>
#include <mutex>
#include <utility>

namespace optlog {

namespace {

c10::Device requestedDevice(const std::string &name)
{
    if (name == "cpu")
        return c10::Device(c10::DeviceType::CPU);
    if (!cuda::built())
        throw ConfigError("runtime.device",
                          "config: runtime.device = \"" + name
                              + "\": this optlog is built against LibTorch " TORCH_VERSION
                                " without CUDA. Use runtime.device = \"cpu\", or build optlog against a "
                                "CUDA LibTorch on a machine with an NVIDIA GPU (tools/cuda/README.md)");
    if (!torch::cuda::is_available())
        throw ConfigError("runtime.device",
                          "config: runtime.device = \"" + name
                              + "\": LibTorch has CUDA but sees no GPU (check the "
                                "driver with nvidia-smi, and CUDA_VISIBLE_DEVICES). Use runtime.device = \"cpu\" here");
    // Device 0 of those visible: CUDA_VISIBLE_DEVICES chooses which GPU that is.
    return c10::Device(c10::DeviceType::CUDA, 0);
}

// The scratch BF16 products book through the counting allocator on `paths` and `threads` threads:
// measured, since only the kernel a product reaches knows it, and neither the CPU's flags nor
// LibTorch's version say which kernel that is. oneDNN's BF16 matmul without native BF16
// ("gemm:jit": Ice Lake) keeps FP32 copies of the output in a scratchpad it takes from LibTorch's
// allocator, whether optlog's matmul primitive calls it or LibTorch does (a PyPI wheel's own oneDNN
// 3.x, on every AVX-512 CPU), and the two versions book a single product's differently (2.6 a copy
// per thread, 3.x one); kernels that keep their accumulators in tiles book none. Widened sgemm
// keeps its tiles outside the allocator. Measured once per path and thread count in a process: a
// single product (640 x 64 by 64 x 512) and a batch of two matrices per thread (64 x 32 by 32 x
// 128 each), a few milliseconds, with the threads restored after.
Bf16ProductScratch bf16ProductScratchOn(ProductPaths paths, int threads)
{
    if (paths.bfloat16 == ProductPath::Sgemm)
        return {};
    static std::mutex mutex;
    static std::map<std::pair<ProductPath, int>, Bf16ProductScratch> measured;
    const std::lock_guard lock(mutex);
    const auto known = measured.find({paths.bfloat16, threads});
    if (known != measured.end())
        return known->second;

    CountingAllocator::install();
    // The caller's threads come back however the probe ends (a product may throw).
    struct ThreadsRestored
    {
        int threads;
        ~ThreadsRestored() { at::set_num_threads(threads); }
    } restored{at::get_num_threads()};
    at::set_num_threads(threads);
    const auto options = at::TensorOptions().dtype(at::kBFloat16);
    // Bytes booked above the product's output, per element of `elements`; a few bytes of a
    // kernel's own are not scratch.
    const auto scratchOf = [&](const at::Tensor &a, const at::Tensor &b, double elements) {
        gemmMatmul(a, b, paths); // makes the kernel (a primitive's cache entry) before it is measured
        at::Tensor product;
        const CountingAllocator::Excursion excursion = CountingAllocator::instance().excursionOf(
            [&] { product = gemmMatmul(a, b, paths); });
        const double bytes = double(excursion.peakBytes - excursion.leftBytes) / elements;
        return bytes >= 0.5 ? bytes : 0.0;
    };
    Bf16ProductScratch scratch;
    scratch.singleBytes = scratchOf(at::ones({640, 64}, options), at::ones({64, 512}, options), 640 * 512);
    scratch.batchBytes = scratchOf(at::ones({2 * threads, 64, 32}, options), at::ones({2 * threads, 32, 128}, options),
                                   64 * 128 * threads);
    return measured[{paths.bfloat16, threads}] = scratch;
}

} // namespace

c10::Device runDevice(const RunConfig &config)
{
    const c10::Device device = requestedDevice(config.runtime.device);
    requirePrecisionOnDevice(precisionModeOf(config), device.is_cuda() ? "cuda" : "cpu");
    if (!compat::hasFusedAttention && config.memory.attention == Attention::Sdpa)
        throw ConfigError("memory.attention",
                          "config: memory.attention = \"sdpa\" needs LibTorch 2.0 or newer (its fused "
                          "scaled_dot_product_attention); this optlog is built against " TORCH_VERSION
                          ". Use \"chunked\", which keeps no T x T matrix for backward either, or \"naive\"");
    return device;
}

DeviceTerms deviceTermsOf(const RunConfig &config, std::optional<ComputeCapability> assumed)
{
    DeviceTerms terms;
    if (config.runtime.device != "cuda") {
        const int threads = runThreads(config.runtime);
        const bool bf16Products = precisionModeOf(config).compute == Dtype::BFloat16;
        terms = cpuDeviceTerms(cpuModelName(), TORCH_VERSION,
                               bf16Products
                                   ? bf16ProductScratchOn(runProductPaths(config.runtime, at::kBFloat16), threads)
                                   : Bf16ProductScratch{},
                               threads);
    } else if (cuda::built() && torch::cuda::is_available()) {
        const auto [major, minor] = cuda::computeCapability(0);
        terms = cudaDeviceTerms(ComputeCapability{major, minor}, cuda::deviceName(0), TORCH_VERSION,
                                processEnvironment());
    } else {
        terms = cudaDeviceTerms(assumed, "", TORCH_VERSION, processEnvironment());
        terms.onThisMachine = false;
        terms.unknown.insert(terms.unknown.begin(),
                             std::string(cuda::built() ? "a GPU: LibTorch sees none here"
                                                       : "a GPU: this optlog is built without CUDA")
                                 + ", so no calibration on it either (its first run there calibrates it)");
        if (assumed)
            terms.unknown.push_back("the chip was named (compute capability " + assumed->text()
                                    + "), not seen: its workspaces follow from that");
    }
    // The test hook that makes the CPU count as a GPU does is a device of its own: its calibration
    // must never be taken for the CPU's.
    if (const auto &overcount = CountingAllocator::overcount(); overcount && !terms.capability)
        terms.chip += " (" + overcount->describe() + ")";
    terms.hasSdpa = compat::hasFusedAttention;
    return terms;
}

Tf32Guard::Tf32Guard(bool on)
    : m_previous(at::globalContext().allowTF32CuBLAS())
{
    at::globalContext().setAllowTF32CuBLAS(on);
}

Tf32Guard::~Tf32Guard()
{
    at::globalContext().setAllowTF32CuBLAS(m_previous);
}

void synchronize(c10::Device device)
{
    if (device.is_cuda())
        torch::cuda::synchronize(device.index());
}

std::string describeDevice(c10::Device device)
{
    if (!device.is_cuda())
        return "cpu";
    return device.str() + " " + cuda::deviceDescription(device.index());
}

std::string deviceName(c10::Device device)
{
    return device.is_cuda() ? cuda::deviceName(device.index()) : "cpu";
}

std::string nvidiaDriverVersion(const std::string &versionFile)
{
    // "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build ...": the
    // first word of digits and dots.
    std::ifstream file(versionFile);
    std::string word;
    while (file >> word)
        if (std::isdigit(static_cast<unsigned char>(word.front())) && word.find('.') != std::string::npos
            && word.find_first_not_of("0123456789.") == std::string::npos)
            return word;
    return "";
}

nlohmann::json deviceEnvironment(c10::Device device)
{
    nlohmann::json out = {{"device", describeDevice(device)}, {"device_name", deviceName(device)}};
    if (device.is_cuda())
        out["driver"] = nvidiaDriverVersion();
    return out;
}

DeviceMemory::DeviceMemory(c10::Device device)
    : m_device(device)
{ }

int64_t DeviceMemory::currentBytes() const
{
    return m_device.is_cuda() ? cuda::memoryStats(m_device.index()).allocatedBytes
                              : CountingAllocator::instance().currentBytes();
}

namespace {

// The high-water marks takePhasePeak read before it reset the allocator's: one device trains in a
// process, so they are the process's. 0 where no phase peak was taken since resetPeak.
std::atomic<int64_t> carriedPeak{0};
std::atomic<int64_t> carriedReservedPeak{0};

void carry(std::atomic<int64_t> &carried, int64_t peak)
{
    int64_t now = carried.load(std::memory_order_relaxed);
    while (peak > now && !carried.compare_exchange_weak(now, peak, std::memory_order_relaxed)) {
    }
}

} // namespace

int64_t DeviceMemory::allocatorPeakBytes() const
{
    return m_device.is_cuda() ? cuda::memoryStats(m_device.index()).allocatedPeakBytes
                              : CountingAllocator::instance().peakBytes();
}

void DeviceMemory::resetAllocatorPeak() const
{
    if (m_device.is_cuda())
        cuda::resetPeakStats(m_device.index());
    else
        CountingAllocator::instance().resetPeak();
}

int64_t DeviceMemory::peakBytes() const
{
    return std::max(carriedPeak.load(std::memory_order_relaxed), allocatorPeakBytes());
}

std::pair<int64_t, int64_t> DeviceMemory::inUseAndPeakBytes() const
{
    const int64_t carried = carriedPeak.load(std::memory_order_relaxed);
    if (!m_device.is_cuda())
        return {CountingAllocator::instance().currentBytes(),
                std::max(carried, CountingAllocator::instance().peakBytes())};
    const cuda::MemoryStats stats = cuda::memoryStats(m_device.index());
    return {stats.allocatedBytes, std::max(carried, stats.allocatedPeakBytes)};
}

void DeviceMemory::resetPeak() const
{
    resetAllocatorPeak();
    carriedPeak.store(0, std::memory_order_relaxed);
    carriedReservedPeak.store(0, std::memory_order_relaxed);
}

int64_t DeviceMemory::takePhasePeak() const
{
    const int64_t peak = allocatorPeakBytes();
    carry(carriedPeak, peak);
    if (const auto reserved = reservedPeakBytes())
        carry(carriedReservedPeak, *reserved);
    resetAllocatorPeak();
    return peak;
}

std::optional<int64_t> DeviceMemory::reservedPeakBytes() const
{
    if (!m_device.is_cuda())
        return std::nullopt;
    return std::max(carriedReservedPeak.load(std::memory_order_relaxed),
                    cuda::memoryStats(m_device.index()).reservedPeakBytes);
}

void DeviceMemory::setPhase(const char *phase) const
{
    // The phase names a budget refusal, and budgets exist on the CPU only.
    CountingAllocator::instance().setPhase(phase);
}

} // namespace optlog
