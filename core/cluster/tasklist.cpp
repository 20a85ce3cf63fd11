// SPDX-License-Identifier: MIT
#include "core/cluster/tasklist.h"

#include "core/analysis/texttable.h"
#include "core/cluster/slurm.h"

#include <filesystem>
#include <string>

namespace optlog {

namespace {

// "step 120 of 300" from the task's shard, or why there is nothing to say yet.
std::string progressOf(const Store &study, const ClusterTask &task)
{
    const std::string shard = study.absolutePath(task.shard);
    if (!std::filesystem::exists(shard))
        return "-";
    try {
        const Store store(shard, Store::Access::ReadOnly);
        const int64_t runId = shardRunOf(store, task);
        if (runId == 0)
            return "-";
        const RunRecord run = store.requireRun(runId);
        const std::vector<StepMetrics> metrics = store.metrics(runId);
        const std::string step = metrics.empty() ? "no step yet" : "step " + std::to_string(metrics.back().step);
        return run.isFinished() ? std::string(outcomeName(*run.outcome)) + ", not gathered" : step;
    } catch (const StoreError &) {
        return "shard unreadable";
    }
}

} // namespace

std::string formatPendingClusterTasks(const Store &study, const TaskStatesOf &statesOf)
{
    TextTable table({{"run"}, {"job"}, {"task", TextTable::Align::Right}, {"state"}, {"progress"}, {"shard"}});
    bool any = false;
    const std::vector<ClusterJob> jobs = study.clusterJobs();
    for (const ClusterJob &job : jobs) {
        bool pending = false;
        for (const ClusterTask &task : job.tasks)
            pending = pending || task.gatheredRunId == 0;
        if (!pending)
            continue; // asks Slurm only about jobs with something to show
        const std::map<int64_t, std::string> states = statesOf(job.jobId, int64_t(job.tasks.size()));
        for (const ClusterTask &task : job.tasks) {
            if (task.gatheredRunId != 0 || isSuperseded(jobs, task))
                continue;
            const auto seen = states.find(task.task);
            const TaskState state = taskStateOf(seen != states.end() ? seen->second : task.state);
            const std::string progress = progressOf(study, task);
            if (hasEnded(state) && progress == "-")
                continue; // ended without a run: `optlog gather` says so, and nothing is left to gather
            table.addRow({task.runName, job.jobId, std::to_string(task.task),
                          seen != states.end() ? taskStateName(state)
                                               : std::string(taskStateName(state)) + " (last seen " + task.stateAt + ")",
                          progress, task.shard});
            any = true;
        }
    }
    if (!any)
        return "";
    return "\nOn the cluster, not gathered yet (`optlog gather " + study.path() + "` collects the runs that ended):\n"
           + table.render();
}

} // namespace optlog
