// SPDX-License-Identifier: MIT
#pragma once

#include "core/analysis/runsummary.h"
#include "core/cluster/tasklist.h"
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

// A run of the study on a cluster, not gathered yet: its task as the scheduler says, and its run
// in the task's shard study as far as it has got.
struct ClusterTaskSnapshot
{
    PendingClusterTask pending;
    std::string shard;      // the shard study, absolute
    RunSnapshotPtr run;     // null until the task has created its run
    std::string shardError; // why the shard could not be read
};

struct StudySnapshot
{
    std::string path;
    std::vector<RunSnapshotPtr> runs;              // in creation order
    std::vector<ClusterTaskSnapshot> clusterTasks; // in job and task order
    std::map<int64_t, std::string> remoteHosts;    // runs trained on another machine: its SSH destination
    std::string error;                             // why the study could not be read; runs is then empty

    RunSnapshotPtr find(int64_t runId) const;
    // The task by Slurm's name for it ("4242_1"); null when it is not pending (gathered, say).
    const ClusterTaskSnapshot *findClusterTask(const std::string &slurmId) const;
};

// Reads the study without writing to it. A finished run's rows never change, so `finishedCache`
// (runs of an earlier snapshot) is reused instead of read again: a study with many long
// finished runs costs one query per refresh, not one per point; a finished run renamed, noted,
// tagged or archived since gets its new record over its cached rows. Safe to call on any thread:
// it opens its own connection. The study's cluster tasks not gathered yet come with their runs read
// from their shards, and their states as `statesOf` says (none given: as last stored).
StudySnapshot loadStudySnapshot(const std::string &path, const std::map<int64_t, RunSnapshotPtr> &finishedCache,
                                const TaskStatesOf &statesOf = {});

} // namespace optlog
