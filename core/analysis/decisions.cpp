// SPDX-License-Identifier: MIT
// The terminal's summary of a comparison: what `optlog study` and `optlog compare` print unless
// asked for --wide. Every line fits kTerminalColumns.
#include "core/analysis/comparison.h"
#include "core/analysis/texttable.h"
#include "core/contract/format.h"

#include <algorithm>
#include <cmath>

namespace optlog {

namespace {

std::string deltaCell(const ComparisonRow &row)
{
    if (row.action == Action::Baseline || row.completed == 0 || std::isnan(row.deltaLoss))
        return "–";
    if (!row.quality.seedNoiseKnown())
        return formatted("%+.4f", row.deltaLoss); // one seed on a side: no interval to give
    return formatted("%+.4f ± %.4f", row.deltaLoss, row.quality.halfWidth);
}

std::string memoryCell(const ComparisonRow &row)
{
    if (row.peakBytes <= 0)
        return "–";
    if (row.action == Action::Baseline || std::fabs(row.memorySaved) < 0.005)
        return formatBytes(row.peakBytes);
    return formatBytes(row.peakBytes) + formatted(" %+.0f%%", -100 * row.memorySaved);
}

std::string riskCell(NumericsRisk risk, double value)
{
    const char *mark = "";
    switch (riskLevel(risk, value)) {
    case RiskLevel::Watch: mark = " !"; break;
    case RiskLevel::Trouble: mark = " !!"; break;
    case RiskLevel::Fine:
    case RiskLevel::Unknown: break;
    }
    return riskValueText(risk, value) + mark;
}

std::string numericsTable(const std::vector<ComparisonRow> &rows)
{
    std::vector<TextTable::Column> columns = {{"run"}, {"step", TextTable::Align::Right}};
    for (NumericsRisk risk : kNumericsRisks)
        columns.push_back({riskTitle(risk), TextTable::Align::Right});
    columns.push_back({"worst for FP16"});
    TextTable table(columns);
    bool any = false;
    for (const auto &r : rows) {
        if (!r.risks.measured())
            continue;
        any = true;
        std::vector<std::string> cells = {printable(r.name), std::to_string(r.risks.step)};
        for (NumericsRisk risk : kNumericsRisks)
            cells.push_back(riskCell(risk, riskValue(r.risks, risk)));
        cells.push_back(r.risks.underflowTensor.empty() ? "–" : r.risks.underflowTensor);
        table.addRow(cells);
    }
    if (!any)
        return "";
    return wrapped("16-bit numerics, measured on each run's own tensors at its last measured step: the share of "
                   "gradient elements FP16 would zero without a loss scaler and with one, the share of AdamW updates "
                   "a BF16 weight would lose, and the largest activation against FP16's 65504 (! close to trouble, "
                   "!! trouble; --wide names the worst tensor of each):")
           + table.render();
}

} // namespace

std::string formatDecisions(const std::vector<ComparisonRow> &rows, const std::string &baselineName, double tolerance)
{
    TextTable table({{"run"},
                     {"seeds", TextTable::Align::Right},
                     {"Δ loss ± 95%", TextTable::Align::Right},
                     {"speed-up [95%]", TextTable::Align::Right},
                     {"peak memory", TextTable::Align::Right},
                     {"action"}});
    for (const auto &r : rows) {
        // A plan may judge a run against another baseline than the study's (chunked against naive
        // attention at the same context): its row says which.
        std::string action = actionText(r.action);
        if (r.action != Action::Baseline && !r.baseline.empty() && r.baseline != baselineName)
            action += " vs " + printable(r.baseline);
        table.addRow({printable(r.name), std::to_string(r.seeds), deltaCell(r), speedCell(r), memoryCell(r), action});
    }
    std::string out = table.render() + "\n";
    for (const auto &r : rows) {
        std::string verdict = r.verdict;
        if (r.action == Action::Baseline) {
            // The baseline's own line says only what is wrong with it, if anything.
            verdict = instabilityText(r.instabilities);
            if (!r.machineNote.empty())
                verdict += (verdict.empty() ? "" : "; ") + r.machineNote;
            if (verdict.empty())
                continue;
        }
        out += wrapped(printable(r.name) + ": " + verdict, kTerminalColumns, "    ");
    }
    out += "\n";
    for (const std::string &note : comparisonNotes(rows, baselineName, tolerance))
        out += wrapped(note);
    if (const std::string numerics = numericsTable(rows); !numerics.empty())
        out += "\n" + numerics;
    return out;
}

} // namespace optlog
