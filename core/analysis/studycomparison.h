// SPDX-License-Identifier: MIT
#pragma once

#include "core/analysis/comparison.h"
#include "core/store/store.h"

#include <map>
#include <string>
#include <vector>

namespace optlog {

// Which runs of a study to compare, against what.
struct ComparisonRequest
{
    // Groups (a run's replicates over seeds), run names or ids; empty: every group of the study.
    std::vector<std::string> runs;
    std::string baseline;                          // a group, run name or id; empty: the first compared group
    double tolerance = 0.02;                       // nats per token counted as noise
    std::map<std::string, std::string> baselineOf; // group -> its own baseline group (a study plan's)
};

struct StudyComparison
{
    std::vector<GroupSummary> groups; // in the order asked for
    size_t baseline = 0;              // index into groups
    std::vector<ComparisonRow> rows;  // one per group; against its own baseline where the plan names one
    double tolerance = 0.02;
};

// The runs a name asks for: the replicates of the group of that name (the newest run of each
// name), else the run of that name or id alone, as a group of that name. Empty when neither exists.
GroupSummary findGroup(const Store &store, const std::vector<RunSummary> &summaries, const std::string &name);

// What `optlog compare` and `optlog study` print. Throws StoreError naming a run that is not in
// the study, a baseline that is not among the compared groups, or a study with no runs.
StudyComparison compareStudy(const Store &store, const ComparisonRequest &request);

// The decisions within a terminal's 120 columns (`wide`: every column of the verdict table on one
// line per run, for scripts), then each run's measured memory by role.
std::string formatStudyComparison(const std::string &study, const StudyComparison &comparison, bool wide = false);

} // namespace optlog
