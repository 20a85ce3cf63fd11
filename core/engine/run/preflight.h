// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <optional>
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

// The least time a run of optlog's GPT can take here: its model FLOPs (modelFlopsPerToken, with
// checkpointing's recomputed forward) over every step's tokens, at `peakGflops`, the matmul peak
// measured on this machine for its compute dtype. Runs reach a fraction of the peak (their MFU),
// so this is a floor, not a guess. Nothing for a TorchScript module (its FLOPs are its own code's)
// or without a peak.
std::optional<double> leastSeconds(const RunConfig &config, double peakGflops);

// Before the first step: refuses (ConfigError naming train.steps, with the floor and the levers) a
// run whose leastSeconds is over kRefusedSeconds, unless `force`; returns a warning that names the
// floor where it is over kWarnedSeconds (the run then trains), else nothing.
inline constexpr double kWarnedSeconds = 3600;       // an hour
inline constexpr double kRefusedSeconds = 24 * 3600; // a day
std::optional<std::string> checkTimeFits(const RunConfig &config, double peakGflops, bool force);

} // namespace optlog
