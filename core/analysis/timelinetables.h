// SPDX-License-Identifier: MIT
// A run's memory timelines as tables, where the terminal (`optlog show --timeline`), the reports and
// the workbench show them: one row per phase of a step, with where it began and its peak.
#pragma once

#include "core/contract/memorytimeline.h"

#include <string>
#include <vector>

namespace optlog {

// "step 2, the first measured: peak 3.2 MiB at backward, block 1 (every allocation, 14,203 events)".
std::string timelineTitle(const MemoryTimeline &timeline);
std::vector<std::string> timelinePhaseHeader();
// One row per phase: its name (with its microbatch where the step had several), the bytes in use
// when it began, its peak, what it rose by, and "peak" on the step's.
std::vector<std::vector<std::string>> timelinePhaseRows(const MemoryTimeline &timeline);
// Every timeline of a run, each a title and a table; a line that says so when there is none. With
// `predictedPhase` ("backward, block 3": where the memory model puts the peak), a line saying so first.
std::string formatTimelines(const std::vector<MemoryTimeline> &timelines, const std::string &predictedPhase = "");

} // namespace optlog
