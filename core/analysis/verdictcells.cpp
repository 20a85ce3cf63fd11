// SPDX-License-Identifier: MIT
#include "core/analysis/verdictcells.h"

#include "core/analysis/decisionwords.h"
#include "core/analysis/runtext.h"
#include "core/contract/format.h"

#include <cmath>

namespace optlog {

const std::vector<std::string> &verdictColumnTitles()
{
    static const std::vector<std::string> titles = {"Run",           "Seeds",
                                                    "Outcome",       "Val loss at matched tokens",
                                                    "Δ vs baseline", "Speed-up",
                                                    "Tokens/s",      "MFU",
                                                    "Peak memory",   "Verdict"};
    return titles;
}

VerdictCells verdictCells(const ComparisonRow &c, double tolerance)
{
    const bool baseline = isBaseline(c);
    VerdictCells cells;
    std::vector<std::string> &t = cells.text;
    t.resize(verdictColumnTitles().size());
    const auto at = [&t](VerdictColumn column) -> std::string & { return t[size_t(column)]; };
    at(VerdictColumn::Run) = c.name + (baseline ? std::string(" (") + kBaselineWord + ")" : "");
    at(VerdictColumn::Seeds) = std::to_string(c.seeds);
    at(VerdictColumn::Outcome) = outcomeCell(c);
    cells.outcomeNote = c.soleOutcomeMessage;
    const bool hasLoss = c.completed > 0 && std::isfinite(c.validationLoss);
    at(VerdictColumn::ValidationLoss) = hasLoss ? formatted("%.4f", c.validationLoss)
                                                      + (c.seeds > 1 ? formatted(" (sd %.4f)", c.validationSd) : "")
                                                      + " @ " + std::to_string(c.matchedTokens) + " tokens"
                                                : "no validation";
    if (!baseline && hasLoss)
        at(VerdictColumn::Delta) = c.quality.seedNoiseKnown()
                                       ? formatted("%+.4f ± %.4f (Welch 95%%)", c.deltaLoss, c.quality.halfWidth)
                                       : formatted("%+.4f (tolerance ±%g)", c.deltaLoss, tolerance);
    at(VerdictColumn::Speedup) = baseline || c.speedup <= 0 ? "" : speedCell(c);
    std::string &rate = at(VerdictColumn::TokensPerSecond);
    if (c.throughput.steps > 0)
        rate = c.seeds > 1 ? formatted("%.0f (%.0f-%.0f over seeds)", c.tokensPerSecond.median, c.tokensPerSecond.min,
                                       c.tokensPerSecond.max)
                           : formatted("%.0f (%.0f-%.0f)", c.throughput.median, c.throughput.p10, c.throughput.p90);
    else
        rate = "-";
    if (!c.speedNote.empty())
        rate += " " + c.speedNote;
    at(VerdictColumn::Mfu) = c.mfu > 0 ? formatted("%.0f%%", 100 * c.mfu) : "-";
    if (c.mfu > 0)
        cells.mfuNote = "model FLOP utilisation against " + c.mfuAgainst + " measured on this machine";
    else if (!c.recorder.empty())
        cells.mfuNote = c.recorder + ": " + recordedRunLimits();
    std::string &peak = at(VerdictColumn::PeakMemory);
    peak = c.peakBytes > 0 ? formatBytes(c.peakBytes) : "-";
    if (c.seeds > 1 && c.peakBytes > 0 && c.peak.max > c.peak.min)
        peak += " (" + formatBytes(int64_t(c.peak.min)) + "-" + formatBytes(int64_t(c.peak.max)) + ")";
    // A difference within the same-memory bound is the same memory here as in every verdict.
    if (!baseline && (c.memoryCall == MemoryCall::Smaller || c.memoryCall == MemoryCall::Larger))
        peak += " " + formatted("%+.0f%%", -100.0 * c.memorySaved);
    at(VerdictColumn::Verdict) = verdictText(c);
    return cells;
}

} // namespace optlog
