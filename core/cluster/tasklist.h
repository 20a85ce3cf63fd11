// SPDX-License-Identifier: MIT
#pragma once

#include "core/cluster/gather.h"
#include "core/cluster/slurm.h"
#include "core/store/clusterjobs.h"
#include "core/store/store.h"

#include <string>
#include <vector>

namespace optlog {

// A cluster task whose run is not gathered into the study yet, and how it stands.
struct PendingClusterTask
{
    ClusterTask task;
    TaskState state = TaskState::Unknown;
    bool seenNow = false; // the scheduler answered; else the state as last stored (task.stateAt)

    // "running", or "running (last seen 2026-12-03T05:31:12Z)" when the scheduler did not answer.
    std::string stateText() const;
    // Slurm's name of an array task: "4242_1".
    std::string slurmId() const { return task.jobId + "_" + std::to_string(task.task); }
};

// The study's tasks whose runs are not gathered yet, in job and task order, each as `statesOf` says
// now (else as last seen). Left out: tasks whose shard a later task resumed (the run is that task's
// now), and tasks that ended with no run in their shard (`optlog gather` says why; nothing is left
// to gather). Asks the scheduler only about jobs with something not gathered.
std::vector<PendingClusterTask> pendingClusterTasks(const Store &study, const TaskStatesOf &statesOf);

// The same tasks as a table for `optlog runs`, each with a running run's last step, read from its
// shard. Empty when every task's run is gathered.
std::string formatPendingClusterTasks(const Store &study, const TaskStatesOf &statesOf);

} // namespace optlog
