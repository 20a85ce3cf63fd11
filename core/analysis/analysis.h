// SPDX-License-Identifier: MIT
#pragma once

#include "core/analysis/machineidentity.h"
#include "core/config/config.h"
#include "core/contract/format.h"
#include "core/contract/precisionmodes.h"
#include "core/store/store.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
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
    double relativeSpread() const { return median > 0 ? (p90 - p10) / median : 0; }
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

// How a run ended, in words: "running", "completed", "oom at step 6". With `withMessage` the
// engine's reason follows a run that did not complete ("oom at step 6: out of memory budget ...").
std::string outcomeText(const RunRecord &run, bool withMessage = false);

// Where the run's config came from, in words: "derived from run 3 (baseline) of this study" (or of
// another study file); "" for a run designed afresh. `study`: the path of the run's own study.
std::string originText(const RunRecord &run, const std::string &study);
// The name of a run made from `source`: its name with the first free " v2", " v3", ... among
// `existing`.
std::string derivedRunName(const std::string &source, const std::vector<RunRecord> &existing);
// What a derived run changed from the run it was made from, when that run is in `store`:
// "changed: train.steps 8 -> 6", "unchanged"; "" when the source is elsewhere or unreadable.
std::string changesFromOrigin(const Store &store, const RunRecord &run);
// "long, server" or "" : a run's tags as one line.
std::string tagsText(const RunRecord &run);
// Who recorded a run its own trainer trained (`optlog record`: "optlog Python module 1, train.py");
// empty for a run of optlog's engine.
std::string recorderOf(const RunRecord &run);
// What a recorded run lacks that only the engine knows, in words, said in place of the figures.
std::string recordedRunLimits();

// Each state's dtype as the run read it from its tensors, in the precision table's order ("none":
// the mode has no such state); empty when the run stored none (it ended before measuring them).
std::vector<std::pair<PrecisionState, std::string>> storedDtypes(const RunRecord &run);

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
    double mfu() const { return peakGflops > 0 ? achievedGflops / peakGflops : 0; }
};
RunSummary summarize(const Store &store, const RunRecord &run);

// Post-training quantization, where users look: one row per quantization of a run's final weights,
// led by the run's own floating-point weights, and what memory quantizing weights does not touch.
std::vector<std::string> quantizationHeader();
std::vector<std::vector<std::string>> quantizationRows(const std::vector<QuantizationResult> &results);
std::string quantizationUntouched();

// Data parallel, where users look: one row per rank of a run (host, outcome, its share of the step
// time spent in collectives), then per memory role its bytes "measured / predicted". A run on one
// process is one row, its rank 0.
std::vector<std::string> rankHeader();
std::vector<std::vector<std::string>> rankRows(const RunSummary &summary);
// `optlog study` and `compare`: every run's ranks with its ZeRO stage and global throughput, when
// a run among them trained over ranks; else empty.
std::string formatDataParallel(const std::vector<RunSummary> &runs);
// Rank 0's share of the measured steps' time spent in collectives; NaN without ranks.
double communicationShare(const RunSummary &summary);
// "2 ranks x microbatch 4 x accumulation 1 = 8 sequences per step": a run's effective batch.
std::string effectiveBatch(const RunConfig &config);
// "int4 g64", "int8 per channel", "mixed g64 (int8: blocks.0.mlp.fc.weight, ...)".
std::string quantizationLabel(const QuantizationResult &result);
// The same from rows already read, for callers that keep them too.
RunSummary summarize(const RunRecord &run, const std::vector<StepMetrics> &metrics,
                     std::vector<ValidationPoint> validation, const std::vector<MemoryRow> &memory,
                     const std::vector<EventRecord> &events = {}, std::vector<TensorNumerics> numerics = {});

// One memory role of a run, predicted beside measured; -1 where a side has no figure.
struct RoleMemory
{
    MemoryRole role;
    std::string dtype; // the measured state's, else the prediction's
    int64_t predicted = -1;
    int64_t measured = -1;
};
// Every role the rows hold, in the roles' order (core/contract/memoryroles.h).
std::vector<RoleMemory> memoryByRole(const std::vector<MemoryRow> &rows);
// "+1.5%": measured against predicted; "" unless both are there.
std::string residualText(const RoleMemory &line);

// Each run's measured peak by role with the dtype of each state, one line per run.
std::string formatMemoryByRole(const std::vector<RunSummary> &runs);

} // namespace optlog
