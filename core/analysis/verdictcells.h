// SPDX-License-Identifier: MIT
#pragma once

#include "core/analysis/comparison.h"

#include <string>
#include <vector>

namespace optlog {

// The verdict table's columns, in order: the report's table and the workbench's Compare both read
// this one list, so that they show the same columns under the same titles.
enum class VerdictColumn {
    Run,
    Seeds,
    Outcome,
    ValidationLoss,
    Delta,
    Speedup,
    TokensPerSecond,
    Mfu,
    PeakMemory,
    Verdict
};
const std::vector<std::string> &verdictColumnTitles(); // indexed by VerdictColumn

// One row of the verdict table as every table shows it: the reports' and the workbench's Compare
// place these cells, they do not write them.
struct VerdictCells
{
    std::vector<std::string> text; // one per VerdictColumn, in verdictColumnTitles()'s order
    std::string outcomeNote;       // a run alone: the reason it did not complete, for a tooltip
    std::string mfuNote;           // what the MFU divides by, or what a recorded run lacks for one
    const std::string &operator[](VerdictColumn column) const { return text.at(size_t(column)); }
};

// These cells, in the words of decisionwords.h: `optlog compare --wide`, the reports and the
// workbench's Compare all call it. `tolerance` in nats per token, for a delta with one seed a side.
VerdictCells verdictCells(const ComparisonRow &row, double tolerance);

} // namespace optlog
