// SPDX-License-Identifier: MIT
#pragma once

// The few calls that need CUDA's own headers, compiled only when LibTorch was built with CUDA
// (cudasupport_cuda.cpp; cudasupport_none.cpp otherwise). Everything else in the engine reaches
// the GPU through device-generic LibTorch calls.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>

namespace optlog::cuda {

// Whether this optlog was built against a CUDA LibTorch.
bool built();

struct MemoryStats
{
    int64_t allocatedBytes = 0;     // in tensors now
    int64_t allocatedPeakBytes = 0; // since the last reset
    int64_t reservedPeakBytes = 0;  // held by the caching allocator from the driver
};
MemoryStats memoryStats(int deviceIndex);
void resetPeakStats(int deviceIndex);

// Hands the caching allocator's free blocks back to the driver.
void releaseCachedMemory();
// Device memory from cudaMalloc, outside the caching allocator and its statistics; never freed
// (for buffers that live as long as the process).
void *allocateOutsideCache(size_t bytes);

// The GPUs this process sees (CUDA_VISIBLE_DEVICES); 0 without CUDA or without a driver.
int deviceCount();
// The CUDA runtime this optlog was built with, "13.0"; empty without CUDA.
std::string runtimeVersion();
// "NVIDIA H200, 139.8 GiB"
std::string deviceDescription(int deviceIndex);
// "NVIDIA H200", and its compute capability (9, 0): what the memory model's workspaces depend on.
std::string deviceName(int deviceIndex);
std::pair<int, int> computeCapability(int deviceIndex);

// Runs `work` under LibTorch's CUDA sync debug mode (torch.cuda.set_sync_debug_mode("warn")) and
// returns how often LibTorch saw the host wait for the device in it: the GPU's own count of what
// HostSyncs counts (device_checks sets the two side by side). -1 without CUDA.
int64_t countSynchronisations(const std::function<void()> &work);

} // namespace optlog::cuda
