// SPDX-License-Identifier: MIT
// The one writer of a comparison's words. compare() judges (comparison.h); every place that shows
// a judgement (the terminal's tables, the verdict table of the reports and the workbench's
// Compare, the workbench's decision summary) writes it with these, so that a judgement reads the
// same wherever it is shown.
#pragma once

#include "core/analysis/comparison.h"

#include <map>
#include <string>

namespace optlog {

// The baseline's word, wherever its row is named or its verdict written.
inline constexpr const char *kBaselineWord = "baseline";

const char *actionText(Action action);       // "take it", "same quality, not faster here", ...
const char *speedCallName(SpeedCall call);   // "faster", "slower", "same", "too noisy", "not called"
const char *memoryCallName(MemoryCall call); // "smaller", "larger", "same", "not measured"
std::string instabilityText(const std::map<EventKind, int64_t> &counts); // "unstable: 3 loss spikes"; "" none

// The whole verdict in words a person can act on: quality, speed, memory, then what else the
// runs say (seeds that did not complete, instabilities, a machine that changed, data parallel).
// The baseline's: "baseline", with its instabilities and machine note. A group with no completed
// seed: "did not complete (diverged at step 12): no verdict". Judged against a plan's own
// baseline: "vs naive: ...".
std::string verdictText(const ComparisonRow &row);

// The outcome as the tables show it: "completed", "2 of 3 completed", a run alone's "crashed at step 12".
std::string outcomeCell(const ComparisonRow &row);
// The speed-up with its interval: "8.20x [7.86-8.53]", "1.00x" on the baseline's row, "–" where
// the speed is not compared (the verdict says why).
std::string speedCell(const ComparisonRow &row);

// The short decision table's cells, one row a technique: the terminal's (`optlog study`,
// `optlog compare`) and the workbench's decision summary both show these.
struct DecisionCells
{
    std::string quality; // "same: +0.0100 ± 0.0080, 3 vs 3 seeds"; "baseline, 3 seeds"; "no verdict"
    std::string delta;   // the quality's numbers alone: "+0.0100 ± 0.0080", "+0.0100" with one seed; "–"
    std::string speed;   // speedCell: the judgement on it is the action's and the verdict's
    std::string memory;  // "1.20 GiB, saves 30%", "1.20 GiB, same", "1.50 GiB, 20% more"; the baseline's bytes
    std::string action;  // actionText, "vs naive" where judged against a plan's own baseline
};
DecisionCells decisionCells(const ComparisonRow &row);

} // namespace optlog
