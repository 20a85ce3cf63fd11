// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"
#include "core/engine/data/textdata.h"
#include "core/engine/run/memoryprobe.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace optlog {

// One microbatch tried against the budget: predicted by the memory model, then verified with real
// steps (the first optimizer step included) when the prediction fits.
struct MicrobatchTrial
{
    int64_t microbatch = 0;
    int64_t accumulation = 0; // keeps the effective batch
    int64_t predictedPeakBytes = 0;
    int64_t measuredPeakBytes = 0; // 0: the steps did not get that far
    bool fits = false;
    std::string message; // why it does not fit
};

// A lever after the microbatch (shorter context, checkpointing, BF16, a smaller model), applied
// alone to the fitted config: what it would save, and what it costs in speed.
struct LeverTrial
{
    std::string lever;
    std::string notApplicable; // the config's refusal; empty when the lever applies
    int64_t predictedPeakBytes = 0;
    int64_t largestPredictedMicrobatch = 0; // 0: none fits even so
    double tokensPerSecond = 0;             // over 5 steps: a rough figure
    double relativeSpeed = 0;               // against the fitted config's
};

struct FitResult
{
    int64_t budgetBytes = 0;
    int64_t limitBytes = 0;              // the budget less the safety margin: what steps must peak under
    int64_t effectiveBatch = 0;          // sequences per optimizer step, kept by every trial
    std::vector<MicrobatchTrial> trials; // largest microbatch first, up to the first that fits
    int64_t chosenMicrobatch = 0;        // 0: no microbatch fits, the levers are needed
    RunConfig fitted;                    // the config with the chosen microbatch (else microbatch 1)
    double fittedTokensPerSecond = 0;
    std::vector<LeverTrial> levers;
};

// `optlog fit`: the largest microbatch dividing the effective batch that fits a memory budget,
// rehearsed on the CPU's counting allocator, then the next levers in the order to try them.
class FitSearch
{
public:
    // Keeps this much of the budget free: a step's peak varies a little between steps and machines.
    static constexpr double kSafetyMargin = 0.10;

    // Refuses (ConfigError, DataError) what cannot be rehearsed here: a device other than the CPU,
    // a corpus that does not load.
    FitSearch(RunConfig config, int64_t budgetBytes);

    // Runs the real steps. `print` receives the report's lines as the search makes them.
    FitResult run(const std::function<void(const std::string &line)> &print);

private:
    void fitMicrobatch(FitResult &result, const std::function<void(const std::string &)> &print);
    void tryLevers(FitResult &result, const std::function<void(const std::string &)> &print);

    RunConfig m_config;
    int64_t m_budgetBytes;
    TokenSplit m_data;
    MemoryPredictor m_predict; // the memory model's, or a TorchScript module's probes
};

} // namespace optlog
