// SPDX-License-Identifier: MIT
// What a comparison needs about one run, read from the study: its steady throughput, its
// validation, its memory, the machine under it.
#pragma once

#include "core/analysis/machineidentity.h"
#include "core/config/config.h"
#include "core/store/store.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace optlog {

// Steady-state throughput: the median over the steps after warm-up, with the 10th and 90th
// percentiles as its spread (a shared machine's noise shows up there, not in the median).
struct ThroughputSummary
{
    // The steady steps in this many contiguous blocks (two steps a block at least): what a run
    // alone offers a speed-up's interval. Contiguous, so that a busy minute moves one block, and
    // the blocks' spread shows it, where steps one by one would look independent.
    static constexpr int64_t kBlocks = 5;
    double median = 0; // tokens/s
    double p10 = 0;
    double p90 = 0;
    int64_t steps = 0;          // steps counted
    std::vector<double> blocks; // each block's median tokens/s, in step order
};
ThroughputSummary steadyThroughput(const std::vector<StepMetrics> &metrics, int64_t warmupSteps);

// Validation loss at `tokens`, linearly interpolated between the run's validation points;
// NaN outside the measured range.
double validationAt(const std::vector<ValidationPoint> &points, int64_t tokens);

// The machine-speed index over a run: a fixed reference matmul timed every few steps. When it
// moves, the machine changed under the run, and the run's tokens/s says less about the technique.
struct MachineSpeed
{
    static constexpr double kTolerance = 0.15; // variation above this flags the run
    int64_t probes = 0;                        // timings after warm-up
    double medianGflops = 0;                   // the run's reference
    double variation = 0;                      // 1 - p10 / p90 of the timings
    double slowdown = 0;         // 1 - (median of the last third) / (median of the first third); < 0: sped up
    double normalisedMedian = 0; // steady tokens/s, each step scaled by reference / index at that step
    bool flagged() const { return probes >= 2 && variation > kTolerance; }
    std::string describe() const; // "" unless flagged: what happened, in words
};
MachineSpeed machineSpeed(const std::vector<StepMetrics> &metrics, int64_t warmupSteps);

// Who recorded a run its own trainer trained (`optlog record`: "optlog Python module 1, train.py");
// empty for a run of optlog's engine.
std::string recorderOf(const RunRecord &run);

// Everything a comparison needs about one run, read from the study.
struct RunSummary
{
    RunRecord run;
    std::optional<RunConfig> config; // as stored with the run; empty when this optlog cannot read it,
                                     // and for a recorded run, whose config holds its trainer's keys
    std::string recorder;            // recorderOf(run): empty for an engine run
    int64_t parameters = 0;
    int64_t warmupSteps = 1;
    ThroughputSummary throughput;
    std::vector<ValidationPoint> validation;
    int64_t peakBytes = 0;         // counting allocator, complete steps after warm-up
    int64_t peakRssBytes = 0;      // process high-water mark
    std::vector<MemoryRow> memory; // every role, measured and predicted
    MachineSpeed machine;
    // The machine it ran on, an engine run's and a recorded run's alike; unknown when the run does
    // not say. Speeds on different machines compare only through the index.
    MachineIdentity machineIdentity;
    double flopsPerToken = 0;  // model FLOPs per token
    std::string flopsHow;      // a recorded run's: "given" by its trainer or "counted"; empty: optlog's count
    double achievedGflops = 0; // flopsPerToken x steady tokens/s
    double peakGflops = 0;     // the matmul peak measured on this machine for the run's compute dtype; 0 = unknown
    // The run's own rate was above every peak measured for it: peakGflops is that rate, MFU 100%
    // (a peak measured on a busier machine than the run's). MFU above 100% cannot be stored.
    bool peakBeatenByRun = false;
    std::string peakDtype; // float32 | tfloat32 (precision.tf32) | bfloat16 | float16
    std::string peakPath;  // the CPU product path whose peak it is (aten | sgemm | primitive); empty: the best path's
    bool untunedSettings = false;                  // ran without `optlog tune`'s settings for its machine and precision
    std::map<EventKind, int64_t> instabilities;    // loss spikes, skipped steps, ...: how many of each
    std::vector<int64_t> instabilitySteps;         // the step of each
    std::vector<TensorNumerics> numerics;          // the numerics diagnostics, by step
    std::vector<WeightFile> weightFiles;           // final weights and checkpoints on disk
    std::vector<QuantizationResult> quantizations; // of its final weights, oldest first
    std::vector<RankRecord> ranks;                 // data parallel: every rank, rank 0 first; else none
    std::map<int64_t, std::vector<MemoryRow>> rankMemory; // data parallel: each rank's memory by role
    std::vector<MemoryTimeline> timelines;                // its steps' memory timelines, by step
    std::string predictedPeakPhase; // where the memory model puts a steady step's peak; empty: not optlog's GPT
    double mfu() const { return peakGflops > 0 ? achievedGflops / peakGflops : 0; }
};
RunSummary summarize(const Store &store, const RunRecord &run);
// The same from rows already read, for callers that keep them too.
RunSummary summarize(const RunRecord &run, const std::vector<StepMetrics> &metrics,
                     std::vector<ValidationPoint> validation, const std::vector<MemoryRow> &memory,
                     const std::vector<EventRecord> &events = {}, std::vector<TensorNumerics> numerics = {});

} // namespace optlog
