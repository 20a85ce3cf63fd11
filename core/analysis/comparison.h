// SPDX-License-Identifier: MIT
#pragma once

#include "core/analysis/numericsrisks.h"
#include "core/analysis/qualityverdict.h"
#include "core/analysis/runsummary.h"
#include "core/analysis/statistics.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace optlog {

// A median over replicates with their smallest and largest value.
struct Spread
{
    double median = 0;
    double min = 0;
    double max = 0;
};
Spread spreadOf(std::vector<double> values);

// The replicates of one run over seeds: what a verdict compares.
struct GroupSummary
{
    std::string name;                   // the runs' group (a run alone is a group of one)
    std::vector<RunSummary> replicates; // the newest run of each name, in the study's order
    int64_t seeds() const { return int64_t(replicates.size()); }
    // The run that speaks for the group where one run's figure is shown (memory by role, config,
    // origin; they hardly move between seeds), and that is the group when it has one seed: its first.
    const RunSummary &representative() const { return replicates.front(); }
};
// Groups runs by RunRecord::group in the order each group first appears; a later run of the
// same name replaces the earlier one (a rerun).
std::vector<GroupSummary> groupRuns(const std::vector<RunSummary> &runs);

// A technique's speed against the baseline's, judged by the speed-up's interval.
enum class SpeedCall { Unknown, Same, Faster, Slower, TooNoisy };
// Speed-ups within this of 1 are the same speed.
inline constexpr double kSameSpeed = 0.03;
// Faster (slower): the whole interval (min-max) beyond 1 + kSameSpeed (below 1 - kSameSpeed); the
// same: the whole interval within 1 ± kSameSpeed; too noisy: an interval across either bound;
// unknown: no interval (median 0 or max 0).
SpeedCall callSpeed(const Spread &interval);

// A technique's peak memory against the baseline's.
enum class MemoryCall { Unknown, Same, Smaller, Larger };
// Peaks within this share of the baseline's are the same memory: a smaller difference is not worth a decision.
inline constexpr double kSameMemory = 0.03;
// Unknown where a side has no peak; the same where `saved` (1 - peak / the baseline's) is within
// ±kSameMemory; else smaller or larger.
MemoryCall callMemory(int64_t peak, double baselinePeak, double saved);

// What to do about a technique, in plain words: the decision a comparison exists for.
enum class Action {
    Baseline,
    TakeIt,                 // same or better quality, and faster or smaller
    TakeItWhereMemoryBinds, // same quality, smaller but slower
    SameNotFaster,          // same quality, neither faster nor smaller here
    AddSeeds,               // the interval straddles the tolerance
    WorseQuality,
    NotComparable, // validated on other tokens, or no common validation tokens
    NoVerdict,     // a side has no completed run
};

struct ComparisonRow
{
    std::string name;               // the group
    std::string baseline;           // the group it is judged against
    bool ownBaseline = false;       // that is the group's own (a study plan's), not the study's
    int64_t seeds = 1;              // replicates compared
    std::optional<Outcome> outcome; // Completed when every replicate completed; else the first other; empty: running
    // A group of one run: its outcome with the step it ended at ("crashed at step 12") and its
    // message; empty with more seeds, where the count of completed ones says it.
    std::string soleOutcome;
    std::string soleOutcomeMessage;
    int64_t completed = 0;     // replicates that completed
    int64_t matchedTokens = 0; // where every compared run has validation loss
    double validationLoss = 0; // mean over seeds at matchedTokens
    double validationSd = 0;   // over seeds; 0 with one
    double samplingError = 0;  // the validation set's own standard error per run; NaN unknown
    QualityVerdict quality;
    double deltaLoss = 0;         // quality.difference
    ThroughputSummary throughput; // steady tokens/s of the median replicate
    Spread tokensPerSecond;       // steady medians over replicates
    double speedup = 0;           // median tokens/s over the baseline's
    int64_t peakBytes = 0;        // median over replicates
    Spread peak;                  // bytes
    double memorySaved = 0;       // 1 - peak / baseline peak
    MemoryCall memoryCall = MemoryCall::Unknown;
    double mfu = 0;         // of the median replicate; 0 = unknown
    std::string mfuAgainst; // "the bfloat16 matmul peak of the primitive path": what the MFU divides by
    std::string speedNote;  // what the speed depends on besides the technique: "TF32" (precision.tf32); else empty
    std::map<EventKind, int64_t> instabilities; // summed over replicates
    std::string numerics;                       // numericsText of the replicate with the most FP16 underflow
    NumericsRisks risks;                        // of that replicate
    SpeedCall speedCall = SpeedCall::Unknown;
    // The speed-up (median) with its interval (min-max) at two levels: Welch's 95% interval on the
    // logs of the blocks of steady steps within runs (ThroughputSummary::blocks, pooled over seeds),
    // widened to hold every seed-by-seed speed-up (speedOverSeeds: it did, so more seeds, not steps,
    // would narrow it). Zero where there is none: the baseline's own row, too few steps.
    Spread speedupInterval;
    bool speedOverSeeds = false;
    Action action = Action::NoVerdict;
    std::string machineNote; // the machine changed under a replicate; usually empty
    // The group and its baseline ran on different kinds of machine: the kinds, "A vs B". Their speed
    // is then the ratio of tokens/s per unit of each run's machine-speed index, or not called
    // where a run has no index.
    std::string acrossMachines;
    std::string recorder; // who recorded the group's runs (`optlog record`); empty: optlog's engine trained them
    // The config fields that make the group's validation loss a different measurement from the
    // baseline's ("model.context_length 512 vs 128"); empty when both validate alike.
    std::string validationDifference;
    std::string dataParallelBatch; // the effective batch where the runs train over ranks; empty on one
};

// The row every other is judged against: compare() marks it, whatever its place in the table.
inline bool isBaseline(const ComparisonRow &row)
{
    return row.action == Action::Baseline;
}

// Each group against `baseline` at matched tokens; `tolerance` in nats per token. Judges only:
// decisionwords.h words every judgement.
std::vector<ComparisonRow> compare(const GroupSummary &baseline, const std::vector<GroupSummary> &groups,
                                   double tolerance);
// The same for runs alone (each a group of one).
std::vector<ComparisonRow> compare(const RunSummary &baseline, const std::vector<RunSummary> &runs, double tolerance);
} // namespace optlog
