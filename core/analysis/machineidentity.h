// SPDX-License-Identifier: MIT
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>

namespace optlog {

// Which machine a run ran on, as far as its speed depends on it: the same for an engine run and a
// run its own trainer recorded on that machine, so that their speeds compare. Read from the
// environment both record under the same keys (docs/events.md): cpu_model, logical_cpus,
// device_name ("cpu", or the GPU as CUDA names it), driver (the NVIDIA driver's version, on a GPU)
// and libtorch_version.
struct MachineIdentity
{
    std::string cpuModel;
    int64_t logicalCpus = 0;
    std::string device;   // "cpu" or the GPU's name
    std::string driver;   // on a GPU; empty on a CPU
    std::string libtorch; // major.minor.patch: PyTorch's "2.11.0+cu130" and LibTorch's "2.11.0" are one

    // Runs before device_name was recorded are read from `device` ("cuda:0 NVIDIA H200, 139.8 GiB"),
    // and recorded runs before libtorch_version from torch_version.
    static MachineIdentity of(const nlohmann::json &environment);
    bool known() const { return !cpuModel.empty(); }
    // "AMD EPYC, 2 CPUs, cpu, LibTorch 1.13.0"; "..., NVIDIA H200 (driver 580.95.05), LibTorch 2.11.0".
    // Two runs ran on one machine where their texts are equal.
    std::string text() const;
};

// "2.11.0" of "2.11.0+cu130" or "1.13.0a0": the release, without a build's suffix.
std::string releaseOf(const std::string &version);

} // namespace optlog
