// SPDX-License-Identifier: MIT
// The terminal's text of a comparison: what `optlog study` and `optlog compare` print (every line
// within kTerminalColumns), and with --wide the verdict table whole.
#include "core/analysis/decisions.h"

#include "core/analysis/decisionwords.h"
#include "core/analysis/runtext.h"
#include "core/analysis/texttable.h"
#include "core/analysis/verdictcells.h"
#include "core/contract/format.h"

#include <algorithm>
#include <cmath>

namespace optlog {

namespace {

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

std::string formatComparison(const std::vector<ComparisonRow> &rows, const std::string &baselineName, double tolerance)
{
    std::vector<TextTable::Column> columns;
    for (const std::string &title : verdictColumnTitles())
        columns.push_back({title});
    TextTable table(columns);
    for (const auto &r : rows) {
        std::vector<std::string> cells = verdictCells(r, tolerance).text;
        for (std::string &cell : cells)
            cell = printable(cell);
        table.addRow(cells);
    }
    std::string out = table.render(std::numeric_limits<size_t>::max());
    for (const std::string &note : comparisonNotes(rows, baselineName, tolerance))
        out += note + "\n";
    for (const auto &r : rows)
        if (!r.numerics.empty())
            out += "Numerics of " + r.name + ", " + r.numerics + ".\n";
    return out;
}

std::vector<std::string> comparisonNotes(const std::vector<ComparisonRow> &rows, const std::string &baselineName,
                                         double tolerance)
{
    std::vector<std::string> notes;
    notes.push_back(
        formatted("Validation loss (nats/token) at the most tokens every compared run reached, the mean over seeds "
                  "with its standard deviation; delta against %s with Welch's 95%% interval where both sides have "
                  "two seeds or more; same quality = the whole interval within %.3f (with one seed, the "
                  "difference within it).",
                  baselineName.c_str(), tolerance));
    double samplingError = 0;
    for (const auto &r : rows)
        samplingError = std::max(samplingError, std::isnan(r.samplingError) ? 0.0 : r.samplingError);
    if (samplingError > 0)
        notes.push_back(
            formatted("The validation set's own sampling error is up to ±%.3f nats per run (standard error over "
                      "its sequences); every run is scored on the same sequences, so it does not enter delta's "
                      "interval, which covers seed noise.",
                      samplingError));
    notes.push_back(
        "Speed-up: median tokens/s over the baseline's, with its interval at two levels: Welch's 95% interval over "
        "five blocks of each run's steady steps (pooled over seeds), widened to hold every seed-by-seed speed-up; "
        "faster or slower where the whole interval lies beyond 1 ± "
        + percent(kSameSpeed) + ", the same where it lies within, too noisy where it crosses.");
    notes.push_back(
        "Tokens/s and peak memory: medians over seeds. Peak memory: bytes in tensors (the CPU's counting "
        "allocator, CUDA's caching allocator) over complete steps after warm-up, optimizer step included; for a run "
        "over data-parallel ranks, rank 0's (its tokens/s count every rank's); within ± "
        + percent(kSameMemory) + " of the baseline's, the same memory.");
    notes.push_back(
        "MFU: model FLOPs (6N + 12LTC per token; a recorded run's as its trainer gave or counted them) x steady "
        "tokens/s over the matmul peak measured on this machine for the run's compute dtype (FP32, BF16, or FP16 on "
        "CUDA) on a CPU on the run's product path (a recorded run's: ATen's, PyTorch's own), once per rank over "
        "data-parallel ranks.");
    std::string recorded;
    for (const auto &r : rows)
        if (!r.recorder.empty())
            recorded += (recorded.empty() ? "" : ", ") + printable(r.name);
    if (!recorded.empty())
        notes.push_back("Recorded runs (" + recorded + "), trained by their own trainer: " + recordedRunLimits()
                        + ". Their peak memory is what their trainer measured; optlog show names how.");
    return notes;
}

std::string formatDecisions(const std::vector<ComparisonRow> &rows, const std::string &baselineName, double tolerance)
{
    TextTable table({{"run"},
                     {"seeds", TextTable::Align::Right},
                     {"Δ loss ± 95%", TextTable::Align::Right},
                     {"speed-up [95%]", TextTable::Align::Right},
                     {"peak memory", TextTable::Align::Right},
                     {"action"}});
    for (const auto &r : rows) {
        const DecisionCells cells = decisionCells(r);
        table.addRow({printable(r.name), std::to_string(r.seeds), cells.delta, cells.speed, cells.memory,
                      printable(cells.action)});
    }
    std::string out = table.render() + "\n";
    for (const auto &r : rows) {
        // The baseline's own line only when something is wrong with it.
        const std::string verdict = verdictText(r);
        if (isBaseline(r) && verdict == kBaselineWord)
            continue;
        out += wrapped(printable(r.name) + ": " + printable(verdict), kTerminalColumns, "    ");
    }
    out += "\n";
    for (const std::string &note : comparisonNotes(rows, baselineName, tolerance))
        out += wrapped(note);
    if (const std::string numerics = numericsTable(rows); !numerics.empty())
        out += "\n" + numerics;
    return out;
}

} // namespace optlog
