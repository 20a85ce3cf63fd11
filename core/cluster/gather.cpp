// SPDX-License-Identifier: MIT
#include "core/cluster/gather.h"

#include "core/cluster/slurm.h"
#include "core/store/clusterjobs.h"

#include <filesystem>
#include <string>

namespace optlog {

namespace {

std::string taskLabel(const ClusterTask &task)
{
    return "job " + task.jobId + " task " + std::to_string(task.task);
}

// A run its shard still calls running though its task has ended: crashed at its last step, with why.
void markEndedTaskCrashed(const std::string &shardPath, int64_t runId, const std::string &slurmState)
{
    Store shard(shardPath);
    const RunRecord run = shard.requireRun(runId);
    if (run.isFinished())
        return; // opening it for writing found its engine gone on this host, and said so
    const std::vector<StepMetrics> metrics = shard.metrics(runId);
    shard.finishRun(runId, Outcome::Crashed, metrics.empty() ? -1 : metrics.back().step,
                    "its Slurm task ended " + slurmState + " while the run was training");
}

// Where the task's output is, when it wrote any: Slurm's log beside its shard.
std::string logNote(const std::string &shardPath)
{
    const std::filesystem::path log = std::filesystem::path(shardPath).replace_extension(".log");
    return std::filesystem::exists(log) ? "; its output: " + log.string() : "";
}

} // namespace

bool isSuperseded(const std::vector<ClusterJob> &jobs, const ClusterTask &task)
{
    const ClusterTask *newest = nullptr;
    for (const ClusterJob &job : jobs)
        for (const ClusterTask &other : job.tasks)
            if (other.shard == task.shard)
                newest = &other;
    return newest && (newest->jobId != task.jobId || newest->task != task.task);
}

int64_t shardRunOf(const Store &shard, const ClusterTask &task)
{
    int64_t newest = 0;
    for (const RunRecord &run : shard.runs())
        if (run.name == task.runName)
            newest = run.id;
    return newest;
}

Gathering gatherClusterRuns(Store &study, const TaskStatesOf &statesOf)
{
    Gathering result;
    const std::vector<ClusterJob> jobs = clusterJobs(study);
    for (const ClusterJob &job : jobs) {
        const std::map<int64_t, std::string> states = statesOf(job.jobId, int64_t(job.tasks.size()));
        for (ClusterTask task : job.tasks) {
            if (isSuperseded(jobs, task))
                continue; // its run belongs to the later task (its state would say the resumed run crashed)
            const auto seen = states.find(task.task);
            if (seen != states.end() && seen->second != task.state) {
                setClusterTaskState(study, task.jobId, task.task, seen->second);
                task.state = seen->second;
            }
            // Ended as Slurm says; or its run has finished and Slurm no longer knows the task (past
            // MinJobAge, no accounting): then it has ended too.
            bool ended = hasEnded(taskStateOf(task.state));
            const std::string shardPath = study.absolutePath(task.shard);
            try {
                const int64_t runId = std::filesystem::exists(shardPath)
                                          ? shardRunOf(Store(shardPath, Store::Access::ReadOnly), task)
                                          : 0;
                if (runId == 0) {
                    if (ended && task.gatheredRunId == 0)
                        result.lost.push_back(task.runName + " (" + taskLabel(task) + ") ended " + task.state
                                              + " before its run started" + logNote(shardPath));
                } else {
                    RunRecord run = Store(shardPath, Store::Access::ReadOnly).requireRun(runId);
                    ended = ended || (run.isFinished() && seen == states.end());
                    // A run with no end stored: still training, or crashed as only a reader sees it
                    // (its engine gone on this host). Once its task has ended, the crash is stored
                    // in its shard first, so the copy gathered is the shard's final word on it.
                    const bool endStored = run.isFinished() && !run.finishedAt.empty();
                    if (ended && !endStored) {
                        markEndedTaskCrashed(shardPath, runId, task.state);
                        run = Store(shardPath, Store::Access::ReadOnly).requireRun(runId);
                    }
                    if (run.isFinished() && !run.finishedAt.empty()
                        && (task.gatheredRunId == 0 || task.gatheredFinishedAt != run.finishedAt)) {
                        gatherClusterRun(study, Store(shardPath, Store::Access::ReadOnly), runId, task.jobId, task.task);
                        result.gathered.push_back(run.name + " (" + taskLabel(task) + ", " + outcomeName(*run.outcome)
                                                  + ")");
                    }
                }
            } catch (const StoreError &e) {
                result.refused.push_back(shardPath + ": " + e.what());
            }
            if (!ended)
                ++result.waiting;
        }
    }
    return result;
}

} // namespace optlog
