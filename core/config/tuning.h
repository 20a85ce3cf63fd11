// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace optlog {

// Who measured a tuning: `optlog tune` (rounds of alternated runs), or the quick probe an untuned
// machine's first run makes (`optlog tune --quick`: one round of short runs, under a minute).
inline constexpr const char *kMeasuredByTune = "optlog tune";
inline constexpr const char *kMeasuredByProbe = "a quick probe";

// The runtime settings `optlog tune` measured best on this machine for one precision family.
// Thread counts, the OpenMP wait policy and OpenBLAS's core type change a run's speed as much as
// a technique does, and the best choice differs between FP32 (OpenBLAS) and BF16 (oneDNN).
struct TunedSettings
{
    int threads = 0;                          // intra-op and BLAS threads
    std::string waitPolicy;                   // OMP_WAIT_POLICY: PASSIVE | ACTIVE
    std::string coreType;                     // OPENBLAS_CORETYPE to set; empty = leave OpenBLAS's own choice
    double tokensPerSecond = 0;               // measured with these settings
    double untunedTokensPerSecond = 0;        // measured with optlog's defaults, in the same alternation
    std::string measuredBy = kMeasuredByTune; // kMeasuredByTune or kMeasuredByProbe
};

// Without a tuning, `optlog run` uses every logical CPU with this OpenMP wait policy. Measured on
// the 2-core development machine: with two intra-op threads LibTorch's OpenMP workers otherwise
// spin while OpenBLAS's threads wait; FP32 training ran at 5,450 tokens/s with PASSIVE against
// 2,050 without it.
inline constexpr const char *kUntunedWaitPolicy = "PASSIVE";

// One combination `optlog tune` times, with its tokens/s in each round.
struct TuneCandidate
{
    int threads = 1;
    std::string waitPolicy; // PASSIVE | ACTIVE
    std::string coreType;   // empty: OpenBLAS's own choice
    std::vector<double> tokensPerSecond;

    std::string label() const;              // "2 threads, PASSIVE, Haswell"
    double median() const;                  // 0 before any round
    bool isUntunedDefault(int cores) const; // what `optlog run` does without a tuning
};

// Every combination of thread count (all `cores`, and one), wait policy and core type.
std::vector<TuneCandidate> tuneCandidates(int cores, const std::vector<std::string> &coreTypes);

// The fastest candidate by median as settings, with the untuned default's median beside it.
TunedSettings bestSettings(const std::vector<TuneCandidate> &candidates, int cores);

// The OpenBLAS core type worth trying: when OpenBLAS fell back to one of its generic kernels
// (`chosenCore` Prescott, Core2 or Katmai) and the CPU's flags support AVX2 or AVX-512 kernels.
// Empty otherwise. (Whether a user's OPENBLAS_CORETYPE forbids trying is the caller's to check.)
std::string betterCoreType(const std::string &chosenCore, const std::string &cpuFlags);

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
