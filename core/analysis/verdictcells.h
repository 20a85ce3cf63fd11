// SPDX-License-Identifier: MIT
#pragma once

#include "core/analysis/comparison.h"

#include <string>
#include <vector>

namespace optlog {

// One row of the verdict table as every table shows it: the reports' and the workbench's Compare
// place these cells, they do not write them.
struct VerdictCells
{
    std::vector<std::string> text; // one per VerdictColumn, in verdictColumnTitles()'s order
    std::string outcomeNote;       // a run alone: the reason it did not complete, for a tooltip
    std::string mfuNote;           // what the MFU divides by, or what a recorded run lacks for one
    const std::string &operator[](VerdictColumn column) const { return text.at(size_t(column)); }
};

// `solo`: the group's run when it has one seed (its outcome then names its step), else null;
// `tolerance` in nats per token, for a delta with one seed a side.
VerdictCells verdictCells(const ComparisonRow &row, bool isBaseline, double tolerance, const RunRecord *solo);

} // namespace optlog
