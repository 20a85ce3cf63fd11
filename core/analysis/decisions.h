// SPDX-License-Identifier: MIT
// A comparison as a terminal shows it (`optlog compare` and `optlog study`): the rows, the verdicts
// in words and the notes on how they were measured. comparison.h judges; this file only writes.
#pragma once

#include "core/analysis/comparison.h"

#include <string>
#include <vector>

namespace optlog {

// Every column of every row, a line each, with the notes and numerics in full: `--wide`, for scripts.
std::string formatComparison(const std::vector<ComparisonRow> &rows, const std::string &baselineName, double tolerance);
// What a person reads in a terminal, within 120 columns: a row per group (name, seeds, Δ loss with
// its interval, speed with its spread, peak memory with what it saves, the action), the verdicts
// in full below, then the notes, and the 16-bit numerics as a table of their risks.
std::string formatDecisions(const std::vector<ComparisonRow> &rows, const std::string &baselineName, double tolerance);
// The sentences that say how the tables measure (matched tokens, medians, MFU), one per paragraph.
std::vector<std::string> comparisonNotes(const std::vector<ComparisonRow> &rows, const std::string &baselineName,
                                         double tolerance);

} // namespace optlog
