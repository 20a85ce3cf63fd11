// SPDX-License-Identifier: MIT
#include "core/analysis/decisionwords.h"

#include "core/analysis/runtext.h"
#include "core/contract/format.h"
#include "core/contract/rowlookup.h"

#include <cmath>

namespace optlog {

namespace {

std::string speedWords(const ComparisonRow &row)
{
    const Spread &i = row.speedupInterval;
    switch (row.speedCall) {
    case SpeedCall::TooNoisy:
        return formatted("speed too noisy to call (%.2fx, its 95%% interval %.2f-%.2f crosses 1 ± %s: add %s)",
                         row.speedup, i.min, i.max, percent(kSameSpeed).c_str(),
                         row.speedOverSeeds ? "seeds" : "seeds or steps");
    case SpeedCall::Same: return "same speed";
    case SpeedCall::Faster: return formatted("%.2fx faster", row.speedup);
    case SpeedCall::Slower: return percent(1 - row.speedup) + " slower";
    case SpeedCall::Unknown: break;
    }
    if (!row.acrossMachines.empty() && row.speedup <= 0)
        return "speed not called: different machines (" + row.acrossMachines
               + ") and a run without the machine-speed index";
    if (row.speedup > 0)
        return formatted("speed not called (%.2fx): too few steady steps for an interval (4 a run, or two seeds a "
                         "side)",
                         row.speedup);
    return "speed not measured";
}

std::string memoryWords(const ComparisonRow &row)
{
    switch (row.memoryCall) {
    case MemoryCall::Unknown: return "memory not measured";
    case MemoryCall::Same: return "same memory";
    case MemoryCall::Smaller: return "saves " + percent(row.memorySaved) + " memory";
    case MemoryCall::Larger: return "uses " + percent(row.memorySaved) + " more memory";
    }
    return "";
}

std::string qualityWords(const ComparisonRow &row)
{
    std::string quality = row.quality.text();
    if (!row.validationDifference.empty() && row.quality.kind != QualityVerdict::Kind::NotComparable)
        quality += " (validated differently: " + row.validationDifference + ")";
    return quality;
}

// What else the runs say, after the judgement: "; 1 of 3 seeds did not complete; unstable: ...".
std::string notesOf(const ComparisonRow &row)
{
    std::string out;
    if (row.completed > 0 && row.completed < row.seeds)
        out += formatted("; %lld of %lld seeds did not complete", static_cast<long long>(row.seeds - row.completed),
                         static_cast<long long>(row.seeds));
    if (const std::string unstable = instabilityText(row.instabilities); !unstable.empty())
        out += "; " + unstable;
    if (!row.machineNote.empty())
        out += "; " + row.machineNote;
    // Over ranks, what a step trains on and whose memory the verdict weighs.
    if (!row.dataParallelBatch.empty() && !isBaseline(row))
        out += "; data parallel, batch " + row.dataParallelBatch + ", peak memory per rank";
    return out;
}

std::string signedNats(double value)
{
    return formatted("%+.4f", value);
}

} // namespace

const char *actionText(Action action)
{
    static constexpr Named<Action> words[] = {{Action::Baseline, kBaselineWord},
                                              {Action::TakeIt, "take it"},
                                              {Action::TakeItWhereMemoryBinds, "take it where memory binds"},
                                              {Action::SameNotFaster, "same quality, not faster here"},
                                              {Action::AddSeeds, "can't tell yet: add seeds"},
                                              {Action::WorseQuality, "worse quality"},
                                              {Action::NotComparable, "not comparable"},
                                              {Action::NoVerdict, "no verdict yet"}};
    return nameIn(words, action);
}

const char *speedCallName(SpeedCall call)
{
    static constexpr Named<SpeedCall> names[] = {{SpeedCall::Unknown, "not called"},
                                                 {SpeedCall::Same, "same"},
                                                 {SpeedCall::Faster, "faster"},
                                                 {SpeedCall::Slower, "slower"},
                                                 {SpeedCall::TooNoisy, "too noisy"}};
    return nameIn(names, call);
}

const char *memoryCallName(MemoryCall call)
{
    static constexpr Named<MemoryCall> names[] = {{MemoryCall::Unknown, "not measured"},
                                                  {MemoryCall::Same, "same"},
                                                  {MemoryCall::Smaller, "smaller"},
                                                  {MemoryCall::Larger, "larger"}};
    return nameIn(names, call);
}

std::string instabilityText(const std::map<EventKind, int64_t> &counts)
{
    std::string out;
    for (const auto &[kind, count] : counts)
        if (isInstability(kind) && count > 0)
            out += (out.empty() ? "unstable: " : ", ") + instabilityCount(kind, count);
    return out;
}

std::string outcomeCell(const ComparisonRow &row)
{
    if (!row.soleOutcome.empty())
        return row.soleOutcome;
    if (row.completed == row.seeds)
        return "completed";
    return formatted("%lld of %lld completed", static_cast<long long>(row.completed), static_cast<long long>(row.seeds));
}

std::string verdictText(const ComparisonRow &row)
{
    if (isBaseline(row))
        return kBaselineWord + notesOf(row);
    const std::string against = row.ownBaseline ? "vs " + row.baseline + ": " : "";
    if (row.completed == 0 && row.seeds > 1)
        return against
               + formatted("none of %lld seeds completed (%s): no verdict", static_cast<long long>(row.seeds),
                           outcomeName(row.outcome))
               + notesOf(row);
    if (row.completed == 0)
        return against + "did not complete (" + outcomeCell(row) + "): no verdict" + notesOf(row);
    if (row.action == Action::NoVerdict)
        return against + "no verdict: the baseline " + row.baseline + " has no completed run" + notesOf(row);
    std::string speed = speedWords(row);
    if (!row.acrossMachines.empty() && row.speedup > 0)
        speed += " per unit of machine speed (different machines: " + row.acrossMachines + ")";
    return against + qualityWords(row) + ", " + speed + ", " + memoryWords(row) + notesOf(row);
}

std::string speedCell(const ComparisonRow &row)
{
    if (row.speedup <= 0)
        return "–";
    const Spread &i = row.speedupInterval;
    if (isBaseline(row) || i.max <= i.min)
        return formatted("%.2fx", row.speedup);
    return formatted("%.2fx [%.2f-%.2f]", row.speedup, i.min, i.max);
}

DecisionCells decisionCells(const ComparisonRow &row)
{
    DecisionCells cells;
    const QualityVerdict &q = row.quality;
    const bool judged = !isBaseline(row) && row.action != Action::NoVerdict && row.completed > 0
                        && !std::isnan(row.deltaLoss);
    const bool hasDelta = judged && q.kind != QualityVerdict::Kind::NotComparable;
    cells.delta = "–";
    if (hasDelta)
        cells.delta = q.seedNoiseKnown() ? signedNats(row.deltaLoss) + formatted(" ± %.4f", q.halfWidth)
                                         : signedNats(row.deltaLoss); // one seed on a side: no interval to give
    const std::string seeds = formatted("%lld seed%s", static_cast<long long>(row.seeds), row.seeds == 1 ? "" : "s");
    if (isBaseline(row))
        cells.quality = std::string(kBaselineWord) + ", " + seeds;
    else if (!row.validationDifference.empty())
        cells.quality = "validated differently: " + row.validationDifference;
    else if (!hasDelta)
        cells.quality = "no verdict";
    else
        cells.quality = std::string(qualityWord(q.kind)) + ": " + cells.delta
                        + (q.seedNoiseKnown() ? "" : formatted(" (±%g tolerance)", q.tolerance))
                        + formatted(", %lld vs %lld seeds", static_cast<long long>(q.seeds),
                                    static_cast<long long>(q.baselineSeeds));

    cells.speed = speedCell(row);

    cells.memory = row.peakBytes > 0 ? formatBytes(row.peakBytes) : "–";
    if (!isBaseline(row)) {
        switch (row.memoryCall) {
        case MemoryCall::Same: cells.memory += ", same"; break;
        case MemoryCall::Smaller: cells.memory += ", saves " + percent(row.memorySaved); break;
        case MemoryCall::Larger: cells.memory += ", " + percent(row.memorySaved) + " more"; break;
        case MemoryCall::Unknown: break;
        }
    }

    cells.action = actionText(row.action);
    if (row.ownBaseline && !isBaseline(row))
        cells.action += " vs " + row.baseline;
    return cells;
}

} // namespace optlog
