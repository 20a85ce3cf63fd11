// SPDX-License-Identifier: MIT
// Built only against a CUDA LibTorch (see core/engine/CMakeLists.txt).
#include "core/engine/machine/cudasupport.h"

#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/util/Exception.h>

#include <cstdio>
#include <stdexcept>

#include <cuda_runtime_api.h>

namespace optlog::cuda {

bool built()
{
    return true;
}

MemoryStats memoryStats(int deviceIndex)
{
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(c10::DeviceIndex(deviceIndex));
    // Index 0 is StatType::AGGREGATE (all pool sizes) in every LibTorch since 1.x; the enum's
    // namespace moved in 2.x, its order did not.
    MemoryStats out;
    out.allocatedBytes = stats.allocated_bytes[0].current;
    out.allocatedPeakBytes = stats.allocated_bytes[0].peak;
    out.reservedPeakBytes = stats.reserved_bytes[0].peak;
    return out;
}

void resetPeakStats(int deviceIndex)
{
    c10::cuda::CUDACachingAllocator::resetPeakStats(c10::DeviceIndex(deviceIndex));
}

void releaseCachedMemory()
{
    c10::cuda::CUDACachingAllocator::emptyCache();
}

void *allocateOutsideCache(size_t bytes)
{
    void *data = nullptr;
    if (cudaMalloc(&data, bytes) != cudaSuccess)
        throw std::runtime_error("cudaMalloc of " + std::to_string(bytes) + " bytes failed");
    return data;
}

int deviceCount()
{
    int count = 0;
    return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

std::string runtimeVersion()
{
    int version = 0;
    if (cudaRuntimeGetVersion(&version) != cudaSuccess)
        return {};
    return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

std::string deviceDescription(int deviceIndex)
{
    cudaDeviceProp properties{};
    if (cudaGetDeviceProperties(&properties, deviceIndex) != cudaSuccess)
        return "unknown CUDA device";
    char memory[32];
    std::snprintf(memory, sizeof memory, ", %.1f GiB", double(properties.totalGlobalMem) / double(1 << 30));
    return std::string(properties.name) + memory;
}

std::string deviceName(int deviceIndex)
{
    cudaDeviceProp properties{};
    if (cudaGetDeviceProperties(&properties, deviceIndex) != cudaSuccess)
        return "unknown CUDA device";
    return properties.name;
}

std::pair<int, int> computeCapability(int deviceIndex)
{
    cudaDeviceProp properties{};
    if (cudaGetDeviceProperties(&properties, deviceIndex) != cudaSuccess)
        throw std::runtime_error("cudaGetDeviceProperties failed for device " + std::to_string(deviceIndex));
    return {properties.major, properties.minor};
}

namespace {

// Counts the sync debug mode's warnings; passes no other warning on (none is expected in a check).
class SyncWarnings : public c10::WarningHandler
{
public:
    void process(const c10::Warning &warning) override
    {
        if (warning.msg().find("synchroniz") != std::string::npos)
            ++count;
    }
    int64_t count = 0;
};

} // namespace

int64_t countSynchronisations(const std::function<void()> &work)
{
    SyncWarnings warnings;
    c10::WarningUtils::WarningHandlerGuard handler(&warnings);
    auto &state = c10::cuda::warning_state();
    const c10::cuda::SyncDebugMode previous = state.get_sync_debug_mode();
    state.set_sync_debug_mode(c10::cuda::SyncDebugMode::L_WARN);
    try {
        work();
    } catch (...) {
        state.set_sync_debug_mode(previous);
        throw;
    }
    state.set_sync_debug_mode(previous);
    return warnings.count;
}

} // namespace optlog::cuda
