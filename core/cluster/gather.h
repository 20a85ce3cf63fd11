// SPDX-License-Identifier: MIT
#pragma once

#include "core/store/clusterjobs.h"
#include "core/store/store.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace optlog {

// What one gathering did, for the command to print.
struct Gathering
{
    std::vector<std::string> gathered; // "<run> (job 4242 task 1, completed)"
    std::vector<std::string> refused;  // "<shard path>: <why>": a shard that cannot be read is left out
    std::vector<std::string> lost;     // tasks that ended with no run in their shard, and why
    int64_t waiting = 0;               // tasks still queued or running (a run that finished may still be exiting)
};

// Each job's tasks' Slurm states (Slurm::taskStates), by job id; a task it does not know keeps the
// state last stored.
using TaskStatesOf = std::function<std::map<int64_t, std::string>(const std::string &jobId, int64_t tasks)>;

// Gathers the study's cluster tasks: records each task's state as `statesOf` says, and copies each
// ended run from its shard into the study, once (a run resumed in its shard since replaces its
// earlier copy). A run its shard still calls running, whose task has ended (a node that died, a
// task killed), is first marked crashed there at its last step, so that it can be resumed from its
// checkpoint. A shard that cannot be read (truncated, not a study) is refused with its path; the
// other shards are gathered. Idempotent: a second gathering with nothing new copies nothing.
Gathering gatherClusterRuns(Store &study, const TaskStatesOf &statesOf);

// Whether a later task of `jobs` trains into the same shard as `task` (resuming its run there):
// that run is then the later task's to gather.
bool isSuperseded(const std::vector<ClusterJob> &jobs, const ClusterTask &task);

// The run of `task` in its shard: the newest of its name; 0 when the shard has none (yet).
int64_t shardRunOf(const Store &shard, const ClusterTask &task);

} // namespace optlog
