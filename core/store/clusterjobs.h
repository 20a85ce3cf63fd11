// SPDX-License-Identifier: MIT
// Runs a study handed to a cluster scheduler (`optlog study --scheduler slurm`): the jobs, their
// tasks' states, and the runs gathered from the tasks' shard studies.
#pragma once

#include "core/store/store.h"

#include <cstdint>
#include <string>
#include <vector>

namespace optlog {

// A run handed to a cluster scheduler (`optlog study --scheduler slurm`): one task of a job array,
// which trains the run into a shard study of its own (never this file: SQLite must not have writers
// on several machines over a network filesystem), gathered into this study once it has ended.
struct ClusterTask
{
    std::string jobId; // the scheduler's job id, "4242"
    int64_t task = 0;  // the index in the job array
    std::string runName;
    std::string shard;              // the shard study, relative to this study's folder
    std::string state;              // the scheduler's state when last seen: PENDING, RUNNING, COMPLETED, FAILED, ...
    std::string stateAt;            // when it was seen, ISO 8601, UTC
    int64_t gatheredRunId = 0;      // the copy of the shard's run in this study; 0: not gathered
    std::string gatheredFinishedAt; // that shard run's end when it was gathered
};
struct ClusterJob
{
    std::string jobId;
    std::string scheduler; // "slurm"
    std::string plan;      // the study plan it ran, as TOML with the overrides it was given
    std::string script;    // the batch script it was submitted with
    std::string submittedAt;
    std::vector<ClusterTask> tasks; // by task index
};

// The job and its tasks, as submitted (tasks not yet gathered).
void addClusterJob(Store &study, const ClusterJob &job);
std::vector<ClusterJob> clusterJobs(const Store &study); // oldest first
void setClusterTaskState(Store &study, const std::string &jobId, int64_t task, const std::string &state);
// Copies the ended run `shardRunId` of the shard `source` into `study`, with every row, under its
// own name (a run trained again has the name of its earlier attempt, as in a local study), and
// records it as task `task` of job `jobId`. A copy gathered earlier from the same shard (by this
// task, or by an earlier task whose run this one resumed there) is replaced, and every task of the
// shard refers to the new one. One transaction: the run is gathered once, or not at all. Refused
// as copyRunsFrom() refuses a run still running.
int64_t gatherClusterRun(Store &study, const Store &source, int64_t shardRunId, const std::string &jobId, int64_t task);

} // namespace optlog
