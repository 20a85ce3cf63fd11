// SPDX-License-Identifier: MIT
// reportSummaryCsv() and reportMetricsCsv(): the report as two tables for a spreadsheet.
#include "core/analysis/report.h"
#include "core/analysis/reportsections_p.h"
#include "core/contract/format.h"

#include <algorithm>
#include <sstream>

namespace optlog {

using namespace Internal;

namespace {

// A group's tags (each once) and its runs' notes (each after its run's name when the group has
// several), for the one line a group has in the summary CSV.
std::string groupTags(const Report &report, const std::string &group)
{
    std::vector<std::string> tags;
    for (const auto &r : report.runs)
        if (r.group == group)
            for (const auto &tag : r.summary.run.tags)
                if (std::find(tags.begin(), tags.end(), tag) == tags.end())
                    tags.push_back(tag);
    std::string out;
    for (const auto &tag : tags)
        out += (out.empty() ? "" : " ") + tag;
    return out;
}

std::string groupNotes(const Report &report, const std::string &group)
{
    std::vector<const ReportRun *> runs;
    for (const auto &r : report.runs)
        if (r.group == group && !r.summary.run.note.empty())
            runs.push_back(&r);
    std::string out;
    for (const ReportRun *r : runs)
        out += (out.empty() ? "" : "\n") + (runs.size() > 1 ? r->summary.run.name + ": " : "") + r->summary.run.note;
    return out;
}

// A group's quantizations, one short entry each: "int4 g64: 5.21 bits/weight, Δ loss +0.00030".
std::string groupQuantizations(const Report &report, const std::string &group)
{
    std::string out;
    for (const auto &r : report.runs)
        if (r.group == group)
            for (const QuantizationResult &q : r.summary.quantizations)
                out += (out.empty() ? "" : "; ") + quantizationLabel(q)
                       + formatted(": %.2f bits/weight, Δ loss %+.5f", q.bitsPerWeight(), q.lossDelta());
    return out;
}

} // namespace

std::string reportSummaryCsv(const Report &report)
{
    std::ostringstream out;
    out << "run,baseline,seeds,completed,outcome,matched_tokens,validation_loss,validation_sd,delta_loss,delta_half_"
           "width_95,"
           "tolerance,tokens_per_second_median,tokens_per_second_min,tokens_per_second_max,speedup,mfu,peak_bytes,"
           "memory_saved,verdict,tags,notes,quantizations\n";
    for (const ComparisonRow &c : report.groups) {
        const VerdictCells cells = verdictCells(c, report.tolerance);
        out << csvField(c.name) << "," << (isBaseline(c) ? "true" : "false") << "," << c.seeds << "," << c.completed
            << "," << csvField(cells[VerdictColumn::Outcome]) << "," << c.matchedTokens << "," << c.validationLoss
            << "," << c.validationSd << "," << c.deltaLoss << "," << c.quality.halfWidth << "," << report.tolerance
            << "," << c.tokensPerSecond.median << "," << c.tokensPerSecond.min << "," << c.tokensPerSecond.max << ","
            << c.speedup << "," << c.mfu << "," << c.peakBytes << "," << c.memorySaved << ","
            << csvField(cells[VerdictColumn::Verdict]) << "," << csvField(groupTags(report, c.name)) << ","
            << csvField(groupNotes(report, c.name)) << "," << csvField(groupQuantizations(report, c.name)) << "\n";
    }
    return out.str();
}

std::string reportMetricsCsv(const Report &report)
{
    std::ostringstream out;
    out << "run,step,tokens,train_loss,learning_rate,grad_norm,step_seconds,tokens_per_second,loss_scale,skipped,"
           "machine_gflops,communication_seconds\n";
    for (const auto &r : report.runs)
        for (const auto &m : r.metrics) {
            out << csvField(r.summary.run.name) << "," << m.step << "," << m.tokens << "," << m.trainLoss << ","
                << m.learningRate << "," << m.gradNorm << "," << m.stepSeconds << "," << m.tokensPerSecond << ","
                << m.lossScale << "," << (m.skipped ? 1 : 0) << "," << m.machineGflops << ",";
            if (m.communicationSeconds) // empty: one rank, no collectives
                out << *m.communicationSeconds;
            out << "\n";
        }
    return out.str();
}

} // namespace optlog
