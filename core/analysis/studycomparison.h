// SPDX-License-Identifier: MIT
#pragma once

#include "core/analysis/analysis.h"
#include "core/store/store.h"

#include <map>
#include <string>
#include <vector>

namespace optlog {

// Which runs of a study to compare, against what.
struct ComparisonRequest
{
    std::vector<std::string> runs;  // names or ids; empty: every run, the newest of each name
    std::string baseline;           // name or id; empty: the first compared run
    double tolerance = 0.02;        // nats per token counted as noise
    std::map<std::string, std::string> baselineOf; // run name -> its own baseline (a study plan's)
};

struct StudyComparison
{
    std::vector<RunSummary> runs;    // in the order asked for
    size_t baseline = 0;             // index into runs
    std::vector<ComparisonRow> rows; // one per run; against its own baseline where the plan names one
    double tolerance = 0.02;
};

// What `optlog compare` and `optlog study` print. Throws StoreError naming a run that is not in
// the study, a baseline that is not among the compared runs, or a study with no runs.
StudyComparison compareStudy(const Store &store, const ComparisonRequest &request);

// The verdict table, then each run's measured memory by role.
std::string formatStudyComparison(const std::string &study, const StudyComparison &comparison);

} // namespace optlog
