// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <string>

namespace optlog {

struct RunConfig;
struct MemoryEstimate;

// What the machine can still give this process: the kernel's estimate of the memory available
// without swapping (MemAvailable), lowered to what a cgroup's memory limit leaves.
struct AvailableMemory
{
    int64_t bytes = 0;  // 0: unknown (no /proc/meminfo), and then nothing is compared with it
    std::string source; // "MemAvailable", "the cgroup's memory.max"
};
AvailableMemory availableMemory();

// Before anything is written or trained: refuses, with a ConfigError that names both numbers and
// the field to change, a run whose predicted peak (the calibrated memory model's, or a TorchScript
// module's probes') is above its memory.budget, or whose predicted peak or matmul calibration is
// above the memory `available` on a CPU run (a GPU's own memory is its allocator's to refuse).
// Without the check a run that cannot fit spends minutes and gigabytes before it fails, or takes the
// machine into swap.
void checkMemoryFits(const RunConfig &config, const MemoryEstimate &estimate, const AvailableMemory &available);

} // namespace optlog
