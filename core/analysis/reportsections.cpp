// SPDX-License-Identifier: MIT
#include "core/analysis/decisionwords.h"
#include "core/analysis/reportsections_p.h"
#include "core/analysis/runtext.h"
#include "core/contract/format.h"

#include <cmath>

namespace optlog::Internal {

namespace {

std::string bytesOrDash(int64_t bytes)
{
    return bytes < 0 ? "-" : formatBytes(bytes);
}

} // namespace

std::string html(const std::string &text)
{
    std::string out;
    for (char c : text) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        default: out += c;
        }
    }
    return out;
}

Table verdictTable(const Report &report)
{
    Table t{verdictColumnTitles(), {}};
    for (const ComparisonRow &row : report.groups)
        t.rows.push_back(verdictCells(row, report.tolerance).text);
    return t;
}

Table dtypeTable(const ReportRun &run)
{
    Table t{{"State", "Dtype"}, {}};
    for (const auto &[name, dtype] : run.dtypes)
        t.rows.push_back({name, dtype});
    return t;
}

Table memoryTable(const ReportRun &run)
{
    Table t{{"Role", "Dtype", "Predicted", "Measured", "Residual"}, {}};
    for (const auto &line : run.memoryLines)
        t.rows.push_back({memoryRoleName(line.role), line.dtype, bytesOrDash(line.predicted),
                          bytesOrDash(line.measured), residualText(line)});
    return t;
}

Table rankTable(const ReportRun &run)
{
    return {rankHeader(), rankRows(run.summary)};
}

std::string rankIntro(const ReportRun &run)
{
    const auto &config = run.summary.config;
    return "Data parallel over " + std::to_string(run.summary.ranks.size()) + " ranks"
           + (config ? ", ZeRO stage " + std::to_string(config->distributed.zeroStage)
                           + " (batch: " + effectiveBatch(*config) + ")"
                     : std::string())
           + "; each rank's memory measured / predicted:";
}

Table quantizationTable(const ReportRun &run)
{
    return {quantizationHeader(), quantizationRows(run.summary.quantizations)};
}

Table changesTable(const Report &report, const ReportRun &run)
{
    Table t{{"Field", report.baseline, run.summary.run.name}, {}};
    for (const auto &change : run.changes)
        t.rows.push_back({change.path, change.values.at(0), change.values.at(1)});
    return t;
}

std::vector<std::string> stabilityLines(const Report &report)
{
    std::vector<std::string> lines;
    for (const auto &c : report.groups) {
        const std::string unstable = instabilityText(c.instabilities);
        std::string line = c.name + ": " + (unstable.empty() ? "no instability recorded" : unstable)
                           + formatted(" over %lld seed%s", static_cast<long long>(c.seeds), c.seeds == 1 ? "" : "s");
        if (!c.numerics.empty())
            line += "; numerics " + c.numerics;
        lines.push_back(line + ".");
    }
    return lines;
}

std::string throughputLine(const ReportRun &run)
{
    const ThroughputSummary &t = run.summary.throughput;
    if (t.steps == 0)
        return "No steady-state steps were measured.";
    std::string line = "Steady-state throughput: " + formatted("%.0f", t.median) + " tokens/s median over "
                       + std::to_string(t.steps) + " steps after warm-up (p10 " + formatted("%.0f", t.p10) + ", p90 "
                       + formatted("%.0f", t.p90) + ").";
    const RunSummary &s = run.summary;
    if (s.peakGflops > 0 && s.flopsPerToken > 0)
        line += " Model FLOPs " + formatted("%.1f", s.flopsPerToken / 1e6) + " M per token"
                + (s.flopsHow.empty() ? "" : " (" + s.flopsHow + ")") + ": " + formatted("%.1f", s.achievedGflops)
                + " GFLOP/s achieved, MFU " + formatted("%.0f%%", 100 * s.mfu()) + " of the "
                + formatted("%.1f", s.peakGflops) + " GFLOP/s " + s.peakDtype + " matmul peak measured on this machine"
                + (s.peakPath.empty() ? "" : " on the run's product path, " + s.peakPath)
                + (s.peakBeatenByRun ? " (the run's own rate: it beat every peak measured for it)" : "") + ".";
    if (s.machine.probes > 0)
        line += " Machine-speed index (reference matmul, " + std::to_string(s.machine.probes) + " timings): median "
                + formatted("%.1f", s.machine.medianGflops) + " GFLOP/s, varied by "
                + formatted("%.0f%%", 100 * s.machine.variation) + "."
                + (s.machine.flagged() ? " Flagged: " + s.machine.describe() + "." : "");
    if (s.untunedSettings)
        line += " Ran with untuned runtime settings: optlog tune had not measured this machine and precision.";
    if (!s.recorder.empty())
        line += " Recorded by " + s.recorder + ": " + recordedRunLimits() + ".";
    return line;
}

std::string question(const Report &report)
{
    return "Which memory and precision technique to use: " + std::to_string(report.groups.size() - 1)
           + " technique(s) judged against " + report.baseline + ", each over its seeds: validation loss compared at "
           + "matched tokens seen (the difference of means with Welch's 95% interval where both sides have two seeds "
           + "or more; same quality when it lies within ±" + formatted("%g", report.tolerance) + " nats per token), "
           + "throughput as the median over seeds of each run's steady-state median, peak memory over complete "
           + "steps after warm-up.";
}

Table environmentTable(const Report &report)
{
    Table t{{"", "value"}, {}};
    for (const auto &[k, v] : report.environment)
        t.rows.push_back({k, v});
    return t;
}

std::vector<std::string> curationLines(const ReportRun &run)
{
    const RunRecord &record = run.summary.run;
    std::vector<std::string> lines;
    if (!record.tags.empty())
        lines.push_back("Tags: " + tagsText(record) + ".");
    if (!record.formerNames.empty()) {
        std::string names;
        for (const auto &name : record.formerNames)
            names += (names.empty() ? "" : ", ") + name;
        lines.push_back("Formerly named: " + names + ".");
    }
    if (!run.origin.empty())
        lines.push_back("Config " + run.origin + ".");
    return lines;
}

void writeOutline(const Report &report, const std::vector<ReportChart> &charts, ReportMarkup &markup)
{
    markup.title("optlog report: " + report.study);
    markup.paragraph(question(report));
    markup.section("Verdicts");
    markup.table(verdictTable(report), "verdicts");
    markup.section("Stability and 16-bit numerics");
    markup.list(stabilityLines(report));
    if (!charts.empty()) {
        markup.section("Charts");
        markup.charts(charts);
    }
    markup.section("Runs");
    for (const ReportRun &run : report.runs) {
        markup.subsection(run.summary.run.name + (run.group == report.baseline ? " (baseline)" : ""));
        markup.paragraph("Outcome: " + run.outcomeText + ". " + throughputLine(run));
        for (const auto &line : curationLines(run))
            markup.paragraph(line);
        if (!run.summary.run.note.empty())
            markup.note(run.summary.run.note);
        // Every run but the one the others' configs are set against.
        if (&run != &report.runs.front()) {
            if (run.changes.empty()) {
                markup.paragraph("Same config as the baseline.");
            } else {
                markup.paragraph("Config that differs from the baseline:");
                markup.table(changesTable(report, run));
            }
        }
        if (!run.dtypes.empty()) {
            markup.paragraph("Dtypes, read from the run's tensors:");
            markup.table(dtypeTable(run));
        }
        markup.paragraph("Memory by role (residual = measured against predicted):");
        markup.table(memoryTable(run));
        if (!run.summary.ranks.empty()) {
            markup.paragraph(rankIntro(run));
            markup.table(rankTable(run));
        }
        if (!run.summary.quantizations.empty()) {
            markup.paragraph(kQuantizationIntro);
            markup.table(quantizationTable(run));
            markup.paragraph(quantizationUntouched());
        }
    }
    markup.section("Environment");
    markup.table(environmentTable(report));
    markup.paragraph("Written by optlog " + report.optlogVersion + " on " + report.createdAt + ".");
}

} // namespace optlog::Internal
