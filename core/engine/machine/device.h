// SPDX-License-Identifier: MIT
#pragma once

#include "core/memorymodel/deviceterms.h"

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace optlog {

struct RunConfig;

// The device a run trains on, from runtime.device. Refuses (ConfigError, before a run writes
// anything) a device this build or machine cannot use, and a precision mode or attention the
// device cannot run, each with the reason and what to use instead.
c10::Device runDevice(const RunConfig &config);

// What the memory model assumes of config's runtime.device on this machine (deviceterms.h): the
// CPU's model, or the GPU's name and compute capability, with this LibTorch's version. Where
// runtime.device is "cuda" and no GPU is here, the chip is not known: `assumed` stands in for its
// compute capability if given, and what is not known is named. Refuses only a bad value of the
// counting allocator's test hook (countingallocator.h), which is a device of its own.
DeviceTerms deviceTermsOf(const RunConfig &config, std::optional<ComputeCapability> assumed = std::nullopt);

// Whether FP32 matrix products on CUDA run in TF32 on tensor cores (precision.tf32; LibTorch's
// allowTF32CuBLAS, PyTorch's torch.backends.cuda.matmul.allow_tf32, off by default), for the
// process, until the guard ends; on the CPU it changes nothing. (optlog's GPT has no convolution,
// cuDNN's own TF32 setting.)
class Tf32Guard
{
public:
    explicit Tf32Guard(bool on);
    ~Tf32Guard();
    Tf32Guard(const Tf32Guard &) = delete;
    Tf32Guard &operator=(const Tf32Guard &) = delete;

private:
    bool m_previous;
};

// Waits for the device's queued work: a timing on CUDA must include the kernels it launched.
void synchronize(c10::Device device);

// "cpu", or "cuda:0 NVIDIA H200, 139.8 GiB": recorded with each run.
std::string describeDevice(c10::Device device);

// The device as the machine identity names it (core/analysis/machineidentity.h): "cpu", or the GPU
// as CUDA names it ("NVIDIA H200"), as PyTorch's torch.cuda.get_device_name does.
std::string deviceName(c10::Device device);
// The NVIDIA driver's version ("580.95.05"), from /proc/driver/nvidia/version; empty without one.
std::string nvidiaDriverVersion(const std::string &versionFile = "/proc/driver/nvidia/version");
// The environment's device keys: device, device_name and, on a GPU, driver.
nlohmann::json deviceEnvironment(c10::Device device);

// Bytes in use on the run's device and their high-water mark. On the CPU they come from the
// counting allocator (exact, and a budget can be rehearsed there); on CUDA from the caching
// allocator's statistics, which also know what it holds from the driver (`reservedPeakBytes`).
class DeviceMemory
{
public:
    explicit DeviceMemory(c10::Device device);

    int64_t currentBytes() const;
    int64_t peakBytes() const;
    // Both at once: on CUDA one read of the allocator's statistics (the per-step event needs both).
    std::pair<int64_t, int64_t> inUseAndPeakBytes() const;
    // Starts a new high-water mark from what is in use now (after warm-up, say).
    void resetPeak() const;
    // The high-water mark since the last call (or resetPeak), which then starts anew from what is
    // in use now: a phase's peak in a memory timeline. The peaks above go on as if it had not been
    // taken: the process carries what it read (the allocators have one high-water mark each).
    int64_t takePhasePeak() const;
    // CUDA: the most the caching allocator held from the driver since the last reset.
    std::optional<int64_t> reservedPeakBytes() const;
    // What the trainer is doing, named when the CPU budget refuses an allocation. A literal.
    void setPhase(const char *phase) const;

private:
    // The allocator's own high-water marks, since the last reset of either kind.
    int64_t allocatorPeakBytes() const;
    void resetAllocatorPeak() const;

    c10::Device m_device;
};

} // namespace optlog
