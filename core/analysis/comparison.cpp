// SPDX-License-Identifier: MIT
#include "core/analysis/comparison.h"

#include "core/analysis/runtables.h"
#include "core/analysis/runtext.h"
#include "core/config/config.h"
#include "core/config/configfields.h"
#include "core/contract/format.h"
#include "core/contract/quantiles.h"
#include "core/contract/rowlookup.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <limits>
#include <set>
#include <sstream>

namespace optlog {

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

bool hasSpeedIndex(const RunSummary *run)
{
    return run->machine.medianGflops > 0;
}

// "" when every run of both sides ran on one machine (or does not say); else the machines, the
// group's then the baseline's: "AMD EPYC, 2 CPUs, cpu, LibTorch 1.13.0 vs Intel Xeon, 2 CPUs, ...".
std::string machineKinds(const std::vector<const RunSummary *> &runs, const std::vector<const RunSummary *> &baseline)
{
    std::set<std::string> all, group, base;
    for (const auto *r : runs)
        if (r->machineIdentity.known())
            group.insert(r->machineIdentity.text());
    for (const auto *r : baseline)
        if (r->machineIdentity.known())
            base.insert(r->machineIdentity.text());
    all.insert(group.begin(), group.end());
    all.insert(base.begin(), base.end());
    if (all.size() <= 1)
        return "";
    const auto joined = [](const std::set<std::string> &kinds) {
        std::string text;
        for (const std::string &kind : kinds)
            text += (text.empty() ? "" : " and ") + kind;
        return text;
    };
    return joined(group) + " vs " + joined(base);
}

// The logs of each run's blocks of steady steps, in the units its speed is compared in.
std::vector<std::vector<double>> logBlocks(const std::vector<const RunSummary *> &runs,
                                           const std::function<double(const RunSummary *)> &unitOf)
{
    std::vector<std::vector<double>> logs;
    for (const auto *r : runs) {
        logs.emplace_back();
        for (const double block : r->throughput.blocks)
            logs.back().push_back(std::log(block / unitOf(r)));
    }
    return logs;
}

// The speed-up's interval at two levels, about the speed-up shown (a ratio of medians): the 95%
// interval of the steps within runs (each side's blocks pooled over its seeds), widened to hold
// every seed-by-seed speed-up (each run's median over each baseline run's). Two seeds that agree
// are as decisive as their blocks; seeds that disagree widen it by as much as they disagree, not
// by Student's t on one degree of freedom (which no two seeds could ever pass). `overSeeds`: the
// seeds, not the steps, set its width. Empty where no run on a side has two blocks.
Spread speedupInterval(double speedup, const std::vector<const RunSummary *> &runs,
                       const std::vector<const RunSummary *> &baselineRuns,
                       const std::function<double(const RunSummary *)> &unitOf, bool &overSeeds)
{
    const double halfWidth = pooledInterval(pooledWithinRuns(logBlocks(runs, unitOf)),
                                            pooledWithinRuns(logBlocks(baselineRuns, unitOf)))
                                 .halfWidth;
    overSeeds = false;
    if (speedup <= 0 || std::isnan(halfWidth))
        return {};
    Spread interval{speedup, speedup * std::exp(-halfWidth), speedup * std::exp(halfWidth)};
    for (const auto *r : runs)
        for (const auto *b : baselineRuns) {
            const double seedBySeed = (r->throughput.median / unitOf(r)) / (b->throughput.median / unitOf(b));
            overSeeds = overSeeds || seedBySeed < interval.min || seedBySeed > interval.max;
            interval.min = std::min(interval.min, seedBySeed);
            interval.max = std::max(interval.max, seedBySeed);
        }
    return interval;
}

// Quality first: a technique that costs quality is not taken, whatever it saves; one whose
// quality is undecided needs seeds before anything else matters.
Action decide(const ComparisonRow &row)
{
    if (!row.validationDifference.empty())
        return Action::NotComparable;
    const bool smaller = row.memoryCall == MemoryCall::Smaller;
    switch (row.quality.kind) {
    case QualityVerdict::Kind::NotComparable: return Action::NotComparable;
    case QualityVerdict::Kind::Worse: return Action::WorseQuality;
    case QualityVerdict::Kind::CantTell: return Action::AddSeeds;
    case QualityVerdict::Kind::Better:
    case QualityVerdict::Kind::Same: break;
    }
    if (row.speedCall == SpeedCall::Faster)
        return Action::TakeIt;
    if (smaller)
        return row.speedCall == SpeedCall::Same ? Action::TakeIt : Action::TakeItWhereMemoryBinds;
    return row.quality.kind == QualityVerdict::Kind::Better ? Action::TakeIt : Action::SameNotFaster;
}

// The fields that decide what a validation loss is measured on: the text, the split, how many
// sequences and their length (a token's loss depends on the context it is predicted from).
// Runs that differ in one of them are not compared on equal terms, whatever their technique.
constexpr const char *kValidationFields[] = {"model.context_length", "data.corpus", "data.path",
                                             "data.validation_fraction", "data.eval_sequences"};

std::string validationDifference(const RunSummary &run, const RunSummary &baseline)
{
    std::string out;
    // A run copied in from a study with another seed was validated on other windows of the text.
    if (run.run.validationSeed != baseline.run.validationSeed)
        out = "validation windows of study seed " + std::to_string(run.run.validationSeed) + " vs "
              + std::to_string(baseline.run.validationSeed);
    if (!run.config || !baseline.config)
        return out;
    for (const auto &field : compareConfigs({*run.config, *baseline.config})) {
        const bool decidesValidation = std::find(std::begin(kValidationFields), std::end(kValidationFields), field.path)
                                       != std::end(kValidationFields);
        if (decidesValidation && field.differs)
            out += (out.empty() ? "" : ", ") + field.path + " " + field.values[0] + " vs " + field.values[1];
    }
    return out;
}

std::vector<const RunSummary *> completedOf(const GroupSummary &group)
{
    std::vector<const RunSummary *> out;
    for (const auto &r : group.replicates)
        if (r.run.outcome == Outcome::Completed)
            out.push_back(&r);
    return out;
}

int64_t lastValidationTokens(const RunSummary &run)
{
    return run.validation.empty() ? 0 : run.validation.back().tokens;
}

// The replicate whose steady throughput is the median one (the lower middle of an even count).
const RunSummary &medianReplicate(std::vector<const RunSummary *> runs)
{
    std::sort(runs.begin(), runs.end(),
              [](const RunSummary *a, const RunSummary *b) { return a->throughput.median < b->throughput.median; });
    return *runs[(runs.size() - 1) / 2];
}

// The group's replicates as a row: how many seeds, how many completed, the outcome, instabilities.
ComparisonRow outcomesOf(const GroupSummary &group)
{
    ComparisonRow row;
    row.name = group.name;
    row.seeds = group.seeds();
    row.completed = int64_t(completedOf(group).size());
    row.outcome = Outcome::Completed;
    for (const auto &r : group.replicates)
        if (r.run.outcome != Outcome::Completed) {
            row.outcome = r.run.outcome;
            break;
        }
    if (group.replicates.size() == 1) {
        row.soleOutcome = outcomeText(group.representative().run);
        row.soleOutcomeMessage = group.representative().run.message;
    }
    for (const auto &r : group.replicates)
        for (const auto &[kind, count] : r.instabilities)
            row.instabilities[kind] += count;
    return row;
}

// Quality at the most tokens every compared run reached.
void judgeQualityOf(ComparisonRow &row, const std::vector<const RunSummary *> &runs,
                    const std::vector<const RunSummary *> &baselineRuns, double tolerance)
{
    row.matchedTokens = std::numeric_limits<int64_t>::max();
    for (const auto *r : runs)
        row.matchedTokens = std::min(row.matchedTokens, lastValidationTokens(*r));
    for (const auto *r : baselineRuns)
        row.matchedTokens = std::min(row.matchedTokens, lastValidationTokens(*r));
    const auto lossesAt = [&](const std::vector<const RunSummary *> &side) {
        std::vector<double> losses;
        for (const auto *r : side)
            losses.push_back(validationAt(r->validation, row.matchedTokens));
        return losses;
    };
    const std::vector<double> losses = lossesAt(runs);
    row.quality = judgeQuality(losses, lossesAt(baselineRuns), tolerance);
    row.deltaLoss = row.quality.difference;
    const SampleStats stats = sampleStats(losses);
    row.validationLoss = stats.mean;
    row.validationSd = stats.sd;
    std::vector<double> errors;
    for (const auto *r : runs)
        if (!r->validation.empty())
            errors.push_back(r->validation.back().samplingError());
    row.samplingError = errors.empty() ? kNaN : sampleStats(errors).mean;
}

// Speed and memory: medians over the replicates. Runs on different kinds of machine compare
// tokens/s per unit of each one's machine-speed index, or not at all. Whether it is faster: the
// speed-up's interval over blocks of steps within runs and over the runs (seeds) themselves; the
// baseline (`ownRow`) is not judged against itself.
void measureSpeedAndMemory(ComparisonRow &row, const std::vector<const RunSummary *> &runs,
                           const std::vector<const RunSummary *> &baselineRuns, bool ownRow)
{
    row.acrossMachines = machineKinds(runs, baselineRuns);
    const bool indexed = std::all_of(runs.begin(), runs.end(), hasSpeedIndex)
                         && std::all_of(baselineRuns.begin(), baselineRuns.end(), hasSpeedIndex);
    // tokens/s are compared per unit of this: 1, or across machines the run's index
    const std::function<double(const RunSummary *)> unitOf = [&](const RunSummary *r) {
        return row.acrossMachines.empty() ? 1.0 : r->machine.medianGflops;
    };
    const bool speedComparable = row.acrossMachines.empty() || indexed;
    std::vector<double> rates, speeds, baselineSpeeds, peaks, baselinePeaks;
    for (const auto *r : runs) {
        rates.push_back(r->throughput.median);
        if (speedComparable)
            speeds.push_back(r->throughput.median / unitOf(r));
        peaks.push_back(double(r->peakBytes));
    }
    for (const auto *r : baselineRuns) {
        if (speedComparable)
            baselineSpeeds.push_back(r->throughput.median / unitOf(r));
        baselinePeaks.push_back(double(r->peakBytes));
    }
    const Spread baselineRate = spreadOf(baselineSpeeds), speed = spreadOf(speeds);
    row.tokensPerSecond = spreadOf(rates);
    row.speedup = baselineRate.median > 0 ? speed.median / baselineRate.median : 0;
    row.peak = spreadOf(peaks);
    row.peakBytes = int64_t(row.peak.median);
    const double baselinePeak = spreadOf(baselinePeaks).median;
    row.memorySaved = baselinePeak > 0 ? 1 - row.peak.median / baselinePeak : 0;
    row.memoryCall = callMemory(row.peakBytes, baselinePeak, row.memorySaved);
    if (!ownRow && speedComparable) {
        row.speedupInterval = speedupInterval(row.speedup, runs, baselineRuns, unitOf, row.speedOverSeeds);
        row.speedCall = callSpeed(row.speedupInterval);
    }
}

// What the median replicate says for the group: its throughput and MFU, how its speed was
// measured, who recorded it; the machine notes and the numerics of whichever replicate has them.
void describeTypical(ComparisonRow &row, const std::vector<const RunSummary *> &runs)
{
    const RunSummary &typical = medianReplicate(runs);
    row.throughput = typical.throughput;
    row.mfu = typical.mfu();
    row.mfuAgainst = "the " + typical.peakDtype + " matmul peak"
                     + (typical.peakPath.empty() ? "" : " of the " + typical.peakPath + " path");
    if (!typical.flopsHow.empty())
        row.mfuAgainst += typical.flopsHow == "counted" ? ", FLOPs per token counted (torch.utils.flop_counter)"
                                                        : ", FLOPs per token as its trainer gave them";
    row.speedNote = typical.config && typical.config->precision.tf32 ? "TF32" : "";
    row.recorder = typical.recorder;
    for (const auto *r : runs)
        if (row.machineNote.empty())
            row.machineNote = r->machine.describe();
    if (const auto &config = runs.front()->config; config && config->distributed.ranks > 1)
        row.dataParallelBatch = effectiveBatch(*config);
    // The replicate whose gradients FP16 would lose most speaks for the group's numerics.
    double worst = -1;
    for (const auto *r : runs)
        for (const auto &n : r->numerics)
            if (n.tensor == kAllParameters && n.step == r->numerics.back().step && n.fp16Underflow > worst) {
                worst = n.fp16Underflow;
                row.numerics = numericsText(r->numerics);
                row.risks = numericsRisks(r->numerics);
            }
}

} // namespace

SpeedCall callSpeed(const Spread &interval)
{
    if (interval.median <= 0 || interval.max <= 0)
        return SpeedCall::Unknown;
    if (interval.min >= 1 + kSameSpeed)
        return SpeedCall::Faster;
    if (interval.max <= 1 - kSameSpeed)
        return SpeedCall::Slower;
    if (interval.min >= 1 - kSameSpeed && interval.max <= 1 + kSameSpeed)
        return SpeedCall::Same;
    return SpeedCall::TooNoisy;
}

MemoryCall callMemory(int64_t peak, double baselinePeak, double saved)
{
    if (peak <= 0 || baselinePeak <= 0)
        return MemoryCall::Unknown;
    if (std::fabs(saved) <= kSameMemory)
        return MemoryCall::Same;
    return saved > 0 ? MemoryCall::Smaller : MemoryCall::Larger;
}

Spread spreadOf(std::vector<double> values)
{
    if (values.empty())
        return {};
    std::sort(values.begin(), values.end());
    return {quantileOfSorted(values, 0.5), values.front(), values.back()};
}

std::vector<GroupSummary> groupRuns(const std::vector<RunSummary> &runs)
{
    std::vector<GroupSummary> groups;
    for (const auto &run : runs) {
        const std::string &name = run.run.group.empty() ? run.run.name : run.run.group;
        auto group = std::find_if(groups.begin(), groups.end(), [&](const GroupSummary &g) { return g.name == name; });
        if (group == groups.end()) {
            groups.push_back({name, {}});
            group = groups.end() - 1;
        }
        auto rerun = std::find_if(group->replicates.begin(), group->replicates.end(),
                                  [&](const RunSummary &r) { return r.run.name == run.run.name; });
        if (rerun != group->replicates.end())
            *rerun = run;
        else
            group->replicates.push_back(run);
    }
    return groups;
}

std::vector<ComparisonRow> compare(const GroupSummary &baseline, const std::vector<GroupSummary> &groups,
                                   double tolerance)
{
    const std::vector<const RunSummary *> baselineRuns = completedOf(baseline);
    std::vector<ComparisonRow> rows;
    for (const auto &group : groups) {
        ComparisonRow row = outcomesOf(group);
        row.baseline = baseline.name;
        const std::vector<const RunSummary *> runs = completedOf(group);
        const bool ownRow = group.name == baseline.name;
        if (runs.empty() || baselineRuns.empty()) {
            row.action = ownRow ? Action::Baseline : Action::NoVerdict;
            rows.push_back(row);
            continue;
        }
        judgeQualityOf(row, runs, baselineRuns, tolerance);
        measureSpeedAndMemory(row, runs, baselineRuns, ownRow);
        describeTypical(row, runs);
        row.validationDifference = validationDifference(*runs.front(), *baselineRuns.front());
        row.action = ownRow ? Action::Baseline : decide(row);
        rows.push_back(row);
    }
    return rows;
}

std::vector<ComparisonRow> compare(const RunSummary &baseline, const std::vector<RunSummary> &runs, double tolerance)
{
    std::vector<GroupSummary> groups;
    for (const auto &r : runs)
        groups.push_back({r.run.name, {r}});
    return compare(GroupSummary{baseline.run.name, {baseline}}, groups, tolerance);
}

} // namespace optlog
