// SPDX-License-Identifier: MIT
// Accuracy of the analytic memory model: predicted against measured, per role and at the peak,
// over a grid of microbatch x context x width x depth x precision x checkpointing x attention.
// Prints a table; the target is the peak within 10% on at least 90% of the configs.
// Run: build/tests/bench/bench_memory [--markdown]
#include "core/config/config.h"
#include "core/memorymodel/memorymodel.h"
#include "core/engine/countingallocator.h"
#include "core/engine/trainer.h"

#include <ATen/Parallel.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>

using namespace optlog;

namespace {

struct Case
{
    int64_t microbatch, context, width, layers;
    std::string mode;
    int64_t checkpointEvery;
    std::string attention;
};

class Quiet : public TrainingObserver
{
public:
    std::atomic<bool> stop{false};
};

std::map<std::string, int64_t> measure(const RunConfig &config)
{
    Trainer trainer(config, loadTokens(config.data, config.model.vocabSize, config.model.contextLength), 1234);
    Quiet quiet;
    std::map<std::string, int64_t> bytes;
    for (const auto &row : trainer.run(quiet, quiet.stop).measuredMemory)
        bytes[memoryRoleName(row.role)] = row.bytes;
    return bytes;
}

} // namespace

int main(int argc, char **argv)
{
    const bool markdown = argc > 1 && std::strcmp(argv[1], "--markdown") == 0;
    CountingAllocator::install();
    at::set_num_threads(1);

    std::vector<Case> cases;
    for (const std::string mode : {"fp32", "autocast-bf16", "master-bf16", "pure-bf16"})
        for (int64_t microbatch : {2, 8})
            for (int64_t context : {64, 256}) {
                cases.push_back({microbatch, context, 64, 2, mode, 0, "naive"});
                if (context == 256)
                    cases.push_back({microbatch, context, 128, 4, mode, 0, "chunked"});
                else
                    cases.push_back({microbatch, context, 128, 4, mode, 1, "naive"});
            }
    cases.push_back({4, 128, 96, 6, "fp32", 2, "naive"});
    cases.push_back({4, 512, 64, 2, "fp32", 0, "naive"});
    cases.push_back({4, 512, 64, 2, "fp32", 0, "chunked"});
    cases.push_back({4, 512, 64, 2, "fp32", 1, "chunked"});

    const char *header = markdown ? "| B | T | C | L | precision | ckpt | attention | saved pred | saved meas | temp pred | "
                                    "temp meas | peak pred | peak meas | error |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
                                  : "%3s %4s %4s %2s %-14s %4s %-8s %10s %10s %9s %9s %10s %10s %7s\n";
    if (markdown)
        std::printf("%s", header);
    else
        std::printf(header, "B", "T", "C", "L", "precision", "ckpt", "attn", "saved_p", "saved_m", "temp_p",
                    "temp_m", "peak_p", "peak_m", "error");
    int within = 0;
    double worst = 0;
    for (const auto &c : cases) {
        RunConfig config = loadRunConfig(
            "smoke", "",
            {"data.corpus=generated", "train.steps=4", "train.eval_interval=100", "memory.warmup_steps=2",
             "train.microbatch=" + std::to_string(c.microbatch), "model.context_length=" + std::to_string(c.context),
             "model.width=" + std::to_string(c.width), "model.layers=" + std::to_string(c.layers), "model.heads=4",
             "precision.mode=" + c.mode, "memory.checkpoint_every=" + std::to_string(c.checkpointEvery),
             "memory.attention=" + c.attention, "memory.attention_chunk=64"});
        const MemoryEstimate predicted = estimateMemory(config);
        auto measured = measure(config);
        const double error = double(predicted.peakBytes - measured["peak"]) / double(measured["peak"]);
        within += std::fabs(error) <= 0.10;
        worst = std::max(worst, std::fabs(error));
        const auto kib = [](int64_t bytes) { return double(bytes) / 1024.0; };
        const char *row = markdown ? "| %lld | %lld | %lld | %lld | %s | %lld | %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %+.1f%% |\n"
                                   : "%3lld %4lld %4lld %2lld %-14s %4lld %-8s %10.0f %10.0f %9.0f %9.0f %10.0f %10.0f %+6.1f%%\n";
        std::printf(row, static_cast<long long>(c.microbatch), static_cast<long long>(c.context),
                    static_cast<long long>(c.width), static_cast<long long>(c.layers), c.mode.c_str(),
                    static_cast<long long>(c.checkpointEvery), c.attention.c_str(),
                    kib(predicted.find(MemoryRole::SavedActivations)->bytes), kib(measured["saved_activations"]),
                    kib(predicted.find(MemoryRole::Temporaries)->bytes), kib(measured["temporaries"]), kib(predicted.peakBytes),
                    kib(measured["peak"]), 100 * error);
        std::fflush(stdout);
    }
    std::printf("\n%d of %zu configs have the predicted peak within 10%% of the measured (target: 90%%); "
                "largest error %.1f%%. Sizes in KiB.\n",
                within, cases.size(), 100 * worst);
    return 0;
}
