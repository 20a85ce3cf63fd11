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

// One product path `optlog tune` timed for a family: what it reached here and how fast it trained.
struct PathTiming
{
    std::string path;           // "aten", "sgemm", "primitive" (core/engine/kernels/gemm.h)
    std::string reached;        // the kernels or ISA, as the run recorded them: "oneDNN 2.6.3, brg:avx512_core_bf16"
    double tokensPerSecond = 0; // median over the rounds
};

// The runtime settings `optlog tune` measured best on this machine for one precision family.
// Thread counts, the OpenMP wait policy, OpenBLAS's core type and the path of the products change
// a run's speed as much as a technique does, and the best choice differs between FP32 and BF16.
struct TunedSettings
{
    int threads = 0;                          // intra-op and BLAS threads
    std::string waitPolicy;                   // OMP_WAIT_POLICY: PASSIVE | ACTIVE
    std::string coreType;                     // OPENBLAS_CORETYPE to set; empty = leave OpenBLAS's own choice
    double tokensPerSecond = 0;               // measured with these settings
    double untunedTokensPerSecond = 0;        // measured with optlog's defaults, in the same alternation
    std::string measuredBy = kMeasuredByTune; // kMeasuredByTune or kMeasuredByProbe
    std::string productPath;                  // the fastest path of the family's products; empty: the defaults
    std::vector<PathTiming> paths;            // every path timed, the chosen one among them
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
    std::string waitPolicy;  // PASSIVE | ACTIVE
    std::string coreType;    // empty: OpenBLAS's own choice
    std::string productPath; // empty: the defaults (runtime.gemm = "onednn")
    std::vector<double> tokensPerSecond;

    std::string label() const;              // "2 threads, PASSIVE, Haswell, primitive"
    double median() const;                  // 0 before any round
    bool isUntunedDefault(int cores) const; // what `optlog run` does without a tuning
};

// Every combination of thread count (all `cores`, and one), wait policy and core type.
std::vector<TuneCandidate> tuneCandidates(int cores, const std::vector<std::string> &coreTypes);

// The fastest candidate by median as settings, with the untuned default's median beside it.
TunedSettings bestSettings(const std::vector<TuneCandidate> &candidates, int cores);

// `best`'s settings on each product path in `paths` (candidates of the second round of timings,
// once the threads and wait policy are chosen).
std::vector<TuneCandidate> pathCandidates(const TunedSettings &best, const std::vector<std::string> &paths);
// `settings` with the fastest of the path candidates by median, and every path's timing;
// `reached` gives what each path reached here, as its runs recorded it.
void choosePath(TunedSettings &settings, const std::vector<TuneCandidate> &candidates,
                const std::vector<std::string> &reached);

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
