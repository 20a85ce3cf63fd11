// SPDX-License-Identifier: MIT
#include "core/engine/run/fitsearch.h"

#include "core/contract/format.h"
#include "core/contract/quantiles.h"
#include "core/engine/machine/device.h"
#include "core/engine/machine/environment.h"
#include "core/engine/memory/countingallocator.h"
#include "core/engine/train/trainer.h"
#include "core/memorymodel/memorymodel.h"

#include <algorithm>

namespace optlog {

namespace {

class Quiet : public TrainingObserver
{
public:
    std::vector<StepMetrics> steps;
    std::atomic<bool> stop{false};
    void step(const StepMetrics &m) override { steps.push_back(m); }
};

struct Steps
{
    bool completed = false;
    int64_t peakBytes = 0;
    double tokensPerSecond = 0;
    std::string message;
};

RunConfig withOverrides(RunConfig config, const std::vector<std::string> &overrides)
{
    for (const auto &o : overrides)
        applyOverride(config, o);
    validate(config);
    return config;
}

RunConfig withMicrobatch(const RunConfig &config, int64_t microbatch, int64_t effective)
{
    return withOverrides(config, {"train.microbatch=" + std::to_string(microbatch),
                                  "train.accumulation=" + std::to_string(effective / microbatch)});
}

// Real complete steps, the first optimizer step included, under `budget` (0: none).
Steps realSteps(RunConfig config, const TokenSplit &data, int64_t budget, int64_t steps)
{
    config.train.steps = steps;
    config.memory.warmupSteps = 1;
    config.train.evalInterval = steps + 1; // no validation: it is not part of a training step's peak
    config.data.evalSequences = 1;
    auto &allocator = CountingAllocator::instance();
    Steps result;
    try {
        allocator.setBudget(budget);
        Trainer trainer(config, data, 1234);
        Quiet quiet;
        const TrainingOutcome outcome = trainer.run(quiet, quiet.stop);
        result.completed = outcome.outcome == Outcome::Completed;
        result.message = outcome.message;
        for (const auto &row : outcome.measuredMemory)
            if (row.role == MemoryRole::Peak)
                result.peakBytes = row.bytes;
        // The median speed after the first step, which warms the caches up.
        std::vector<double> rates;
        for (const StepMetrics &step : quiet.steps)
            if (step.step >= 1 && step.tokensPerSecond > 0)
                rates.push_back(step.tokensPerSecond);
        result.tokensPerSecond = medianOf(rates);
    } catch (const std::exception &e) {
        result.message = e.what();
    }
    allocator.setBudget(0);
    return result;
}

std::vector<int64_t> divisorsDescending(int64_t n)
{
    std::vector<int64_t> out;
    for (int64_t d = n; d >= 1; --d)
        if (n % d == 0)
            out.push_back(d);
    return out;
}

// The largest microbatch dividing the effective batch whose predicted peak fits `limit`; 0 if none.
int64_t largestPredicted(MemoryPredictor &predict, const RunConfig &config, int64_t effective, int64_t limit)
{
    for (int64_t b : divisorsDescending(effective))
        if (predict(withMicrobatch(config, b, effective)).peakBytes <= limit)
            return b;
    return 0;
}

} // namespace

FitSearch::FitSearch(RunConfig config, int64_t budgetBytes)
    : m_config(std::move(config))
    , m_budgetBytes(budgetBytes)
    , m_predict(deviceTermsOf(m_config))
{
    if (m_config.runtime.device != "cpu")
        throw ConfigError("runtime.device", "runtime.device = \"" + m_config.runtime.device
                                                + "\": optlog fit rehearses the budget with the CPU's counting "
                                                  "allocator, so it runs on the CPU; leave runtime.device = \"cpu\" "
                                                  "here and run the fitted config on the GPU");
    m_data = loadTokens(m_config.data, m_config.model.vocabSize, m_config.model.contextLength);
}

// The largest microbatch that fits, from the effective batch down: first the model, then real
// steps; a microbatch the steps refuse is followed by the next smaller. Without one, microbatch 1.
void FitSearch::fitMicrobatch(FitResult &result, const std::function<void(const std::string &)> &print)
{
    const int64_t limit = result.limitBytes, effective = result.effectiveBatch;
    for (int64_t b : divisorsDescending(effective)) {
        const RunConfig candidate = withMicrobatch(m_config, b, effective);
        MicrobatchTrial trial{b, effective / b, m_predict(candidate).peakBytes, 0, false, {}};
        if (trial.predictedPeakBytes > limit)
            continue;
        const Steps steps = realSteps(candidate, m_data, limit, 3);
        trial.measuredPeakBytes = steps.peakBytes;
        trial.fits = steps.completed;
        trial.message = steps.message;
        result.trials.push_back(trial);
        print(formatted("  microbatch %3lld x %3lld: predicted %s, measured %s: %s\n", static_cast<long long>(b),
                        static_cast<long long>(effective / b), formatBytes(trial.predictedPeakBytes).c_str(),
                        trial.measuredPeakBytes ? formatBytes(trial.measuredPeakBytes).c_str() : "-",
                        trial.fits ? "fits" : trial.message.c_str()));
        if (trial.fits) {
            result.chosenMicrobatch = b;
            result.fitted = candidate;
            break;
        }
    }
    if (result.chosenMicrobatch) {
        print(formatted(
            "\nLargest microbatch that fits: %lld, with %lld accumulation steps (effective batch kept at %lld).\n",
            static_cast<long long>(result.chosenMicrobatch),
            static_cast<long long>(effective / result.chosenMicrobatch), static_cast<long long>(effective)));
    } else {
        print("\nNo microbatch fits with this model and context: the levers below are needed.\n");
        result.fitted = withMicrobatch(m_config, 1, effective);
    }
}

// The next levers in order, each applied alone to the fitted config: predicted, and timed over
// a few real steps.
void FitSearch::tryLevers(FitResult &result, const std::function<void(const std::string &)> &print)
{
    const int64_t limit = result.limitBytes, effective = result.effectiveBatch;
    const int64_t halfContext = std::max<int64_t>(1, m_config.model.contextLength / 2);
    const int64_t halfLayers = std::max<int64_t>(1, m_config.model.layers / 2);
    std::vector<std::pair<std::string, std::vector<std::string>>> levers = {
        {"shorter context (T " + std::to_string(halfContext) + ")",
         {"model.context_length=" + std::to_string(halfContext)}},
        {"activation checkpointing, every block", {"memory.checkpoint_every=1"}},
        {"autocast BF16", {"precision.mode=\"autocast-bf16\""}},
    };
    // A TorchScript module's size is its own code's.
    if (m_config.model.source == ModelSource::Builtin)
        levers.push_back({"smaller model (" + std::to_string(halfLayers) + " layers)",
                          {"model.layers=" + std::to_string(halfLayers)}});
    result.fittedTokensPerSecond = realSteps(result.fitted, m_data, 0, 6).tokensPerSecond;
    print("\nNext levers, in the order to try them (time cost measured over 5 steps each, a rough figure):\n");
    print(formatted("  %-42s %14s %22s %12s\n", "lever", "predicted peak", "largest microbatch", "tokens/s"));
    print(formatted("  %-42s %14s %22s %12.0f\n", "(the fitted config)",
                    formatBytes(m_predict(result.fitted).peakBytes).c_str(),
                    result.chosenMicrobatch ? std::to_string(result.chosenMicrobatch).c_str() : "none",
                    result.fittedTokensPerSecond));
    for (const auto &[name, overrides] : levers) {
        LeverTrial lever;
        lever.lever = name;
        RunConfig changed;
        try {
            changed = withOverrides(result.fitted, overrides);
        } catch (const ConfigError &e) {
            lever.notApplicable = e.what();
            result.levers.push_back(lever);
            print(formatted("  %-42s not applicable: %s\n", name.c_str(), e.what()));
            continue;
        }
        lever.predictedPeakBytes = m_predict(changed).peakBytes;
        lever.largestPredictedMicrobatch = largestPredicted(m_predict, changed, effective, limit);
        lever.tokensPerSecond = realSteps(changed, m_data, 0, 6).tokensPerSecond;
        lever.relativeSpeed = result.fittedTokensPerSecond > 0 ? lever.tokensPerSecond / result.fittedTokensPerSecond
                                                               : 0;
        result.levers.push_back(lever);
        print(formatted("  %-42s %14s %22s %7.0f (%.2fx)\n", name.c_str(), formatBytes(lever.predictedPeakBytes).c_str(),
                        lever.largestPredictedMicrobatch
                            ? (std::to_string(lever.largestPredictedMicrobatch) + " (predicted)").c_str()
                            : "none",
                        lever.tokensPerSecond, lever.relativeSpeed));
    }
}

FitResult FitSearch::run(const std::function<void(const std::string &)> &print)
{
    keepTensorMemoryInHeap();
    CountingAllocator::install();
    applyThreadSettings(m_config.runtime);
    FitResult result;
    result.budgetBytes = m_budgetBytes;
    result.limitBytes = int64_t(double(m_budgetBytes) * (1 - kSafetyMargin));
    result.effectiveBatch = m_config.train.microbatch * m_config.train.accumulation;
    const int64_t limit = result.limitBytes, effective = result.effectiveBatch;
    print(formatted("Budget %s, %.0f%% kept free: steps must peak under %s. Effective batch %lld sequences.\n",
                    formatBytes(m_budgetBytes).c_str(), 100 * kSafetyMargin, formatBytes(limit).c_str(),
                    static_cast<long long>(effective)));

    fitMicrobatch(result, print);
    tryLevers(result, print);
    if (result.chosenMicrobatch)
        print(formatted("\nproposal: --set train.microbatch=%lld --set train.accumulation=%lld\n",
                        static_cast<long long>(result.chosenMicrobatch),
                        static_cast<long long>(effective / result.chosenMicrobatch)));
    return result;
}

} // namespace optlog
