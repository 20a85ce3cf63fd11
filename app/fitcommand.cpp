// SPDX-License-Identifier: MIT
// `optlog fit`: the largest microbatch that fits a memory budget, then the next levers.
#include "app/commands.h"

#include "core/analysis/analysis.h"
#include "core/config/config.h"
#include "core/memorymodel/memorymodel.h"
#include "core/engine/countingallocator.h"
#include "core/engine/environment.h"
#include "core/engine/trainer.h"

#include <cstdio>
#include <iostream>

namespace optlog {

namespace {

// Kept free below the budget: the allocator's peak varies a little between steps and machines.
constexpr double kSafetyMargin = 0.10;

class Quiet : public TrainingObserver
{
public:
    std::vector<StepMetrics> steps;
    std::atomic<bool> stop{false};
    void step(const StepMetrics &m) override { steps.push_back(m); }
};

struct Trial
{
    bool fits = false;
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

// Real complete steps, the first optimizer step included, under the budget less the margin.
Trial trial(RunConfig config, const TokenSplit &data, int64_t budget, int64_t steps)
{
    config.train.steps = steps;
    config.memory.warmupSteps = 1;
    config.train.evalInterval = steps + 1; // no validation: it is not part of a training step's peak
    config.data.evalSequences = 1;
    auto &allocator = CountingAllocator::instance();
    Trial t;
    try {
        allocator.setBudget(budget);
        Trainer trainer(config, data, 1234);
        Quiet quiet;
        const TrainingOutcome outcome = trainer.run(quiet, quiet.stop);
        t.fits = outcome.outcome == Outcome::Completed;
        t.message = outcome.message;
        for (const auto &row : outcome.measuredMemory)
            if (row.role == MemoryRole::Peak)
                t.peakBytes = row.bytes;
        t.tokensPerSecond = steadyThroughput(quiet.steps, 1).median;
    } catch (const std::exception &e) {
        t.message = e.what();
    }
    allocator.setBudget(0);
    return t;
}

std::vector<int64_t> divisorsDescending(int64_t n)
{
    std::vector<int64_t> out;
    for (int64_t d = n; d >= 1; --d)
        if (n % d == 0)
            out.push_back(d);
    return out;
}

// The largest microbatch dividing the effective batch whose predicted peak fits `limit`.
int64_t largestPredicted(const RunConfig &config, int64_t effective, int64_t limit)
{
    for (int64_t b : divisorsDescending(effective)) {
        RunConfig c = withOverrides(config, {"train.microbatch=" + std::to_string(b),
                                             "train.accumulation=" + std::to_string(effective / b)});
        if (estimateMemory(c).peakBytes <= limit)
            return b;
    }
    return 0;
}

} // namespace

int fitCommand(const FitRequest &request)
{
    RunConfig config;
    int64_t budget = 0;
    TokenSplit data;
    try {
        config = loadRunConfig(request.preset, request.configFile, request.overrides);
        budget = parseBytes(request.budget, "--memory-budget");
        if (config.runtime.device != "cpu")
            throw ConfigError("runtime.device", "runtime.device = \"" + config.runtime.device + "\": optlog fit rehearses the budget "
                              "with the CPU's counting allocator, so it runs on the CPU; leave runtime.device = "
                              "\"cpu\" here and run the fitted config on the GPU");
        data = loadTokens(config.data, config.model.vocabSize, config.model.contextLength);
    } catch (const std::exception &e) {
        std::cerr << "optlog fit: " << e.what() << "\n";
        return kExitBadInput;
    }
    keepTensorMemoryInHeap();
    CountingAllocator::install();
    applyThreadSettings(config.runtime);
    const int64_t limit = int64_t(double(budget) * (1 - kSafetyMargin));
    const int64_t effective = config.train.microbatch * config.train.accumulation;
    std::printf("Budget %s, %.0f%% kept free: steps must peak under %s. Effective batch %lld sequences.\n",
                formatBytes(budget).c_str(), 100 * kSafetyMargin, formatBytes(limit).c_str(),
                static_cast<long long>(effective));

    // First the model, then real steps; a microbatch the steps refuse is followed by the next smaller.
    RunConfig fitted;
    Trial verified;
    int64_t chosen = 0;
    for (int64_t b : divisorsDescending(effective)) {
        RunConfig c = withOverrides(config, {"train.microbatch=" + std::to_string(b),
                                             "train.accumulation=" + std::to_string(effective / b)});
        const int64_t predicted = estimateMemory(c).peakBytes;
        if (predicted > limit)
            continue;
        verified = trial(c, data, limit, 3);
        std::printf("  microbatch %3lld x %3lld: predicted %s, measured %s: %s\n", static_cast<long long>(b),
                    static_cast<long long>(effective / b), formatBytes(predicted).c_str(),
                    verified.peakBytes ? formatBytes(verified.peakBytes).c_str() : "-",
                    verified.fits ? "fits" : verified.message.c_str());
        if (verified.fits) {
            chosen = b;
            fitted = c;
            break;
        }
    }
    if (chosen)
        std::printf("\nLargest microbatch that fits: %lld, with %lld accumulation steps (effective batch kept at %lld).\n",
                    static_cast<long long>(chosen), static_cast<long long>(effective / chosen),
                    static_cast<long long>(effective));
    else {
        std::printf("\nNo microbatch fits with this model and context: the levers below are needed.\n");
        fitted = withOverrides(config, {"train.microbatch=1", "train.accumulation=" + std::to_string(effective)});
    }

    // The next levers in order, each applied alone to the fitted config.
    struct Lever
    {
        std::string name;
        std::vector<std::string> overrides;
    };
    const int64_t halfContext = std::max<int64_t>(1, config.model.contextLength / 2);
    const std::vector<Lever> levers = {
        {"shorter context (T " + std::to_string(halfContext) + ")",
         {"model.context_length=" + std::to_string(halfContext)}},
        {"activation checkpointing, every block", {"memory.checkpoint_every=1"}},
        {"autocast BF16", {"precision.mode=\"autocast-bf16\""}},
        {"smaller model (" + std::to_string(std::max<int64_t>(1, config.model.layers / 2)) + " layers)",
         {"model.layers=" + std::to_string(std::max<int64_t>(1, config.model.layers / 2))}},
    };
    const Trial reference = trial(fitted, data, 0, 6);
    std::printf("\nNext levers, in the order to try them (time cost measured over 5 steps each, a rough figure):\n");
    std::printf("  %-42s %14s %22s %12s\n", "lever", "predicted peak", "largest microbatch", "tokens/s");
    std::printf("  %-42s %14s %22s %12.0f\n", "(the fitted config)", formatBytes(estimateMemory(fitted).peakBytes).c_str(),
                chosen ? std::to_string(chosen).c_str() : "none", reference.tokensPerSecond);
    for (const auto &lever : levers) {
        RunConfig c;
        try {
            c = withOverrides(fitted, lever.overrides);
        } catch (const ConfigError &e) {
            std::printf("  %-42s not applicable: %s\n", lever.name.c_str(), e.what());
            continue;
        }
        const int64_t largest = largestPredicted(c, effective, limit);
        const Trial timed = trial(c, data, 0, 6);
        const double cost = reference.tokensPerSecond > 0 ? timed.tokensPerSecond / reference.tokensPerSecond : 0;
        std::printf("  %-42s %14s %22s %7.0f (%.2fx)\n", lever.name.c_str(),
                    formatBytes(estimateMemory(c).peakBytes).c_str(),
                    largest ? (std::to_string(largest) + " (predicted)").c_str() : "none", timed.tokensPerSecond, cost);
    }
    if (!chosen)
        return kExitOutOfBudget;
    std::printf("\nproposal: --set train.microbatch=%lld --set train.accumulation=%lld\n", static_cast<long long>(chosen),
                static_cast<long long>(effective / chosen));
    return kExitOk;
}

} // namespace optlog
