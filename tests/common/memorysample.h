// SPDX-License-Identifier: MIT
#pragma once
// Configs for checking the memory model against the counting allocator, and the measurement
// itself. Shared by bench_memory (the fitting grid and fresh samples) and tst_memoryaccuracy.
//
// A sample is drawn from a seed, so a seed nobody looked at while writing the model's terms gives
// configs the model was never fitted on. It covers what the fitting grid never varied: dropout,
// accumulation, 1 to 8 heads, two threads, untied heads, and long context under chunked attention
// in every precision.

#include "core/config/config.h"
#include "core/engine/train/trainer.h"
#include "core/memorymodel/memorymodel.h"

#include <ATen/Parallel.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace optlog::testing {

struct MemoryCase
{
    int64_t microbatch = 2, context = 64, width = 64, layers = 2, heads = 4;
    std::string mode = "fp32";
    int64_t checkpointEvery = 0;
    std::string attention = "naive";
    int64_t attentionChunk = 64;
    double dropout = 0;
    int64_t accumulation = 1;
    int64_t threads = 1;
    bool tiedHead = true;

    std::string label() const
    {
        char text[200];
        std::snprintf(text, sizeof(text), "B%lld T%lld C%lld L%lld H%lld %s ckpt%lld %s%s drop%.1f acc%lld thr%lld%s",
                      static_cast<long long>(microbatch), static_cast<long long>(context),
                      static_cast<long long>(width), static_cast<long long>(layers), static_cast<long long>(heads),
                      mode.c_str(), static_cast<long long>(checkpointEvery), attention.c_str(),
                      attention == "chunked" ? ("/" + std::to_string(attentionChunk)).c_str() : "", dropout,
                      static_cast<long long>(accumulation), static_cast<long long>(threads), tiedHead ? "" : " untied");
        return text;
    }

    // Four steps, the first two of warm-up, on the generated corpus.
    RunConfig config() const
    {
        return loadRunConfig("smoke", "",
                             {"data.corpus=generated", "train.steps=4", "train.eval_interval=100",
                              "memory.warmup_steps=2", "train.microbatch=" + std::to_string(microbatch),
                              "train.accumulation=" + std::to_string(accumulation),
                              "model.context_length=" + std::to_string(context), "model.width=" + std::to_string(width),
                              "model.layers=" + std::to_string(layers), "model.heads=" + std::to_string(heads),
                              "model.dropout=" + std::to_string(dropout),
                              std::string("model.tied_head=") + (tiedHead ? "true" : "false"), "precision.mode=" + mode,
                              "memory.checkpoint_every=" + std::to_string(checkpointEvery),
                              "memory.attention=" + attention,
                              "memory.attention_chunk=" + std::to_string(attentionChunk),
                              // What measureMemoryRoles runs on, so the model sizes per-thread scratch by it.
                              "runtime.threads=" + std::to_string(threads)});
    }
};

// The bounds of a sample: the benchmark's reach up to context 512 and width 192; a CTest's
// smaller, so that it runs in seconds.
struct SampleBounds
{
    std::vector<int64_t> contexts{64, 96, 128, 192, 256, 384, 512};
    std::vector<int64_t> widths{32, 64, 96, 128, 160, 192};
    int64_t maxLayers = 6;
    int64_t minMicrobatch = 1;
    int64_t maxMicrobatch = 8;
};

// A CTest's bounds: small enough to run in seconds, still every precision, both attentions,
// checkpointing, dropout, accumulation, 1 to 8 heads and two threads. Not smaller: the model
// leaves out small tensors (docs/memory-model.md), among them T x V bytes that do not grow with the
// microbatch, and undercounts the weight gradients' transients of checkpointed 16-bit blocks where
// B·T is below about 4·C.
inline SampleBounds testBounds()
{
    SampleBounds small;
    small.contexts = {128, 192, 256};
    small.widths = {64, 96, 128};
    small.maxLayers = 3;
    small.minMicrobatch = 4;
    small.maxMicrobatch = 6;
    return small;
}

// `count` configs drawn from `seed`. Precisions take turns; every fifth config is long context
// (the sample's longest) under chunked attention, so each precision meets it.
inline std::vector<MemoryCase> sampleMemoryCases(uint64_t seed, int count, const SampleBounds &bounds = {})
{
    std::mt19937_64 random(seed);
    const auto pick = [&random](const auto &values) {
        return values[std::uniform_int_distribution<size_t>(0, values.size() - 1)(random)];
    };
    const auto between = [&random](int64_t low, int64_t high) {
        return std::uniform_int_distribution<int64_t>(low, high)(random);
    };
    const auto chance = [&random](double p) { return std::bernoulli_distribution(p)(random); };
    static const std::vector<std::string> modes{"fp32", "autocast-bf16", "master-bf16", "pure-bf16"};
    std::vector<MemoryCase> cases;
    for (int i = 0; i < count; ++i) {
        MemoryCase c;
        c.mode = modes[size_t(i) % modes.size()];
        c.width = pick(bounds.widths);
        c.heads = pick(std::vector<int64_t>{1, 2, 4, 8});
        c.layers = between(1, bounds.maxLayers);
        c.microbatch = between(bounds.minMicrobatch, bounds.maxMicrobatch);
        c.context = pick(bounds.contexts);
        c.attention = chance(0.5) ? "chunked" : "naive";
        if (i % 5 == 4) {
            c.context = bounds.contexts.back();
            c.attention = "chunked";
        }
        c.attentionChunk = pick(std::vector<int64_t>{32, 64, 128});
        c.checkpointEvery = chance(0.5) ? 0 : between(1, 2);
        c.dropout = chance(0.4) ? 0.1 : 0.0;
        c.accumulation = chance(0.6) ? 1 : between(2, 3);
        c.threads = chance(0.5) ? 1 : 2;
        c.tiedHead = chance(0.8);
        cases.push_back(c);
    }
    return cases;
}

// The run's measured memory by role name ("peak", "saved_activations", "temporaries", ...):
// the real trainer on the counting allocator, which the caller has installed.
inline std::map<std::string, int64_t> measureMemoryRoles(const MemoryCase &c)
{
    class Quiet : public TrainingObserver
    { };
    const RunConfig config = c.config();
    at::set_num_threads(int(c.threads));
    Trainer trainer(config, loadTokens(config.data, config.model.vocabSize, config.model.contextLength), 1234);
    Quiet quiet;
    std::atomic<bool> stop{false};
    std::map<std::string, int64_t> bytes;
    for (const auto &row : trainer.run(quiet, stop).measuredMemory)
        bytes[memoryRoleName(row.role)] = row.bytes;
    return bytes;
}

} // namespace optlog::testing
