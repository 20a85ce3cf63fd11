// SPDX-License-Identifier: MIT
#include "core/cluster/tasklist.h"

#include "core/analysis/texttable.h"
#include "core/contract/program.h"
#include "core/store/clusterjobs.h"

#include <filesystem>
#include <string>

namespace optlog {

std::string PendingClusterTask::stateText() const
{
    const std::string name = taskStateName(state);
    return seenNow ? name : name + " (last seen " + task.stateAt + ")";
}

namespace {

// Whether the task's shard holds its run (or cannot be read: then there is something to say).
bool shardHoldsRun(const Store &study, const ClusterTask &task)
{
    const std::string shard = study.absolutePath(task.shard);
    if (!std::filesystem::exists(shard))
        return false;
    try {
        return shardRunOf(Store(shard, Store::Access::ReadOnly), task) != 0;
    } catch (const StoreError &) {
        return true;
    }
}

// "step 120" from the task's shard, or why there is nothing to say yet.
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

std::vector<PendingClusterTask> pendingClusterTasks(const Store &study, const TaskStatesOf &statesOf)
{
    std::vector<PendingClusterTask> pending;
    const std::vector<ClusterJob> jobs = clusterJobs(study);
    for (const ClusterJob &job : jobs) {
        bool anyPending = false;
        for (const ClusterTask &task : job.tasks)
            anyPending = anyPending || task.gatheredRunId == 0;
        if (!anyPending)
            continue;
        const std::map<int64_t, std::string> states = statesOf ? statesOf(job.jobId, int64_t(job.tasks.size()))
                                                               : std::map<int64_t, std::string>{};
        for (const ClusterTask &task : job.tasks) {
            if (task.gatheredRunId != 0 || isSuperseded(jobs, task))
                continue;
            const auto seen = states.find(task.task);
            PendingClusterTask entry{task, taskStateOf(seen != states.end() ? seen->second : task.state),
                                     seen != states.end()};
            if (hasEnded(entry.state) && !shardHoldsRun(study, task))
                continue;
            pending.push_back(std::move(entry));
        }
    }
    return pending;
}

std::string formatPendingClusterTasks(const Store &study, const TaskStatesOf &statesOf)
{
    TextTable table({{"run"}, {"job"}, {"task", TextTable::Align::Right}, {"state"}, {"progress"}, {"shard"}});
    const std::vector<PendingClusterTask> pending = pendingClusterTasks(study, statesOf);
    if (pending.empty())
        return "";
    for (const PendingClusterTask &entry : pending)
        table.addRow({entry.task.runName, entry.task.jobId, std::to_string(entry.task.task), entry.stateText(),
                      progressOf(study, entry.task), entry.task.shard});
    return "\nOn the cluster, not gathered yet (`" + pasteableCommand({"optlog", "gather", study.path()})
           + "` collects the runs that ended):\n" + table.render();
}

} // namespace optlog
