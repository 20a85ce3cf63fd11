// SPDX-License-Identifier: MIT
#pragma once

#include "core/analysis/analysis.h"
#include "core/store/store.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace optlog {

// Everything the workbench shows about one run, read from the study file in one go.
struct RunSnapshot
{
    RunSummary summary;               // the record, config, throughput, validation, memory by role
    std::vector<StepMetrics> metrics; // every step: the full data, downsampled only for display
    int64_t totalSteps = 0;           // from the run's config
    double etaSeconds = -1;           // running runs: remaining steps at the mean step time so far

    const RunRecord &run() const { return summary.run; }
    bool isFinished() const { return summary.run.isFinished(); }
    double finalValidationLoss() const;
};

using RunSnapshotPtr = std::shared_ptr<const RunSnapshot>;

struct StudySnapshot
{
    std::string path;
    std::vector<RunSnapshotPtr> runs; // in creation order
    std::string error;                // why the study could not be read; runs is then empty

    RunSnapshotPtr find(int64_t runId) const;
};

// Reads the study without writing to it. A finished run's rows never change, so `finishedCache`
// (runs of an earlier snapshot) is reused instead of read again: a study with many long
// finished runs costs one query per refresh, not one per point; a finished run renamed, noted,
// tagged or archived since gets its new record over its cached rows. Safe to call on any thread:
// it opens its own connection.
StudySnapshot loadStudySnapshot(const std::string &path, const std::map<int64_t, RunSnapshotPtr> &finishedCache);

} // namespace optlog
