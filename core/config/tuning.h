// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <string>

namespace optlog {

// The runtime settings `optlog tune` measured best on this machine for one precision family.
// Thread counts, the OpenMP wait policy and OpenBLAS's core type change a run's speed as much as
// a technique does, and the best choice differs between FP32 (OpenBLAS) and BF16 (oneDNN).
struct TunedSettings
{
    int threads = 0;               // intra-op and BLAS threads
    std::string waitPolicy;        // OMP_WAIT_POLICY: PASSIVE | ACTIVE
    std::string coreType;          // OPENBLAS_CORETYPE to set; empty = leave OpenBLAS's own choice
    double tokensPerSecond = 0;    // measured with these settings
    double untunedTokensPerSecond = 0; // measured with optlog's defaults, in the same alternation
};

// "fp32", "bf16" or "fp16": the mode's compute dtype. Runs that compute in one dtype share kernels,
// and so their best settings. Throws ConfigError for a mode the precision table does not have.
std::string precisionFamily(const std::string &precisionMode);

// $XDG_CACHE_HOME/optlog/runtime-tuning.json, else ~/.cache/optlog/runtime-tuning.json.
std::string tuningCacheFile();

// `machineKey` names the CPU, its flags and the library versions the settings were measured with.
std::optional<TunedSettings> readTuning(const std::string &cacheFile, const std::string &machineKey,
                                        const std::string &family);
void writeTuning(const std::string &cacheFile, const std::string &machineKey, const std::string &family,
                 const TunedSettings &settings);

} // namespace optlog
