// SPDX-License-Identifier: MIT
#include "ui/studysnapshot.h"

#include "core/config/config.h"
#include "core/store/remoteruns.h"
#include "core/store/weights.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <numeric>

namespace optlog {

double RunSnapshot::finalValidationLoss() const
{
    return summary.validation.empty() ? std::nan("") : summary.validation.back().loss;
}

RunSnapshotPtr StudySnapshot::find(int64_t runId) const
{
    for (const auto &run : runs)
        if (run->run().id == runId)
            return run;
    return nullptr;
}

const ClusterTaskSnapshot *StudySnapshot::findClusterTask(const std::string &slurmId) const
{
    for (const auto &task : clusterTasks)
        if (task.pending.slurmId() == slurmId)
            return &task;
    return nullptr;
}

namespace {

// The steps a recorded run's trainer planned (`optlog record` keeps them in its environment).
int64_t plannedStepsOf(const std::string &environmentJson)
{
    const auto environment = nlohmann::json::parse(environmentJson, nullptr, /*allow_exceptions=*/false);
    if (!environment.is_object() || !environment.contains("planned_steps")
        || !environment["planned_steps"].is_number_integer())
        return 0;
    return environment["planned_steps"].get<int64_t>();
}

RunSnapshotPtr readRun(const Store &store, const RunRecord &record)
{
    auto snapshot = std::make_shared<RunSnapshot>();
    snapshot->metrics = store.metrics(record.id);
    snapshot->summary = summarize(record, snapshot->metrics, store.validation(record.id), store.memory(record.id),
                                  store.events(record.id), store.numerics(record.id));
    snapshot->summary.weightFiles = weightFiles(store, record.id);
    snapshot->summary.quantizations = quantizations(store, record.id);
    snapshot->summary.timelines = store.timelines(record.id);
    // 0 for a config written by a newer optlog, or a recorded run whose trainer did not say: the
    // run shows without progress.
    snapshot->totalSteps = snapshot->summary.config ? snapshot->summary.config->train.steps
                                                    : plannedStepsOf(record.environmentJson);
    const auto &m = snapshot->metrics;
    if (!record.isFinished() && !m.empty() && snapshot->totalSteps > 0) {
        const double seconds = std::accumulate(m.begin(), m.end(), 0.0,
                                               [](double sum, const StepMetrics &s) { return sum + s.stepSeconds; });
        const int64_t remaining = std::max<int64_t>(0, snapshot->totalSteps - int64_t(m.size()));
        snapshot->etaSeconds = seconds / double(m.size()) * double(remaining);
    }
    return snapshot;
}

// Whether what the user may change about a finished run (its name, group, note, tags, archiving)
// is the same in both records.
bool curatedAlike(const RunRecord &a, const RunRecord &b)
{
    return a.name == b.name && a.group == b.group && a.note == b.note && a.tags == b.tags
           && a.formerNames == b.formerNames && a.archived == b.archived;
}

// The task's run as its shard has it now. A shard is being written by its task, so it is read
// whole each time, as a running run is.
ClusterTaskSnapshot readClusterTask(const Store &study, PendingClusterTask pending)
{
    ClusterTaskSnapshot snapshot{std::move(pending), {}, nullptr, {}};
    snapshot.shard = study.absolutePath(snapshot.pending.task.shard);
    if (!std::filesystem::exists(snapshot.shard))
        return snapshot; // queued: its task has not started
    try {
        const Store shard(snapshot.shard, Store::Access::ReadOnly);
        if (const int64_t runId = shardRunOf(shard, snapshot.pending.task); runId != 0)
            snapshot.run = readRun(shard, shard.requireRun(runId));
    } catch (const StoreError &e) {
        snapshot.shardError = e.what();
    }
    return snapshot;
}

} // namespace

StudySnapshot loadStudySnapshot(const std::string &path, const std::map<int64_t, RunSnapshotPtr> &finishedCache,
                                const TaskStatesOf &statesOf)
{
    StudySnapshot snapshot;
    snapshot.path = path;
    try {
        const Store store(path, Store::Access::ReadOnly);
        for (const auto &record : store.runs()) {
            const auto cached = finishedCache.find(record.id);
            // A finished run's rows do not change, but `optlog quantize` may add to it later.
            const bool reusable = cached != finishedCache.end() && cached->second->isFinished() && record.isFinished()
                                  && cached->second->run().lastQuantization == record.lastQuantization;
            if (!reusable) {
                snapshot.runs.push_back(readRun(store, record));
            } else if (curatedAlike(cached->second->run(), record)) {
                snapshot.runs.push_back(cached->second);
            } else { // renamed, noted, tagged or archived: its rows are as they were
                auto updated = std::make_shared<RunSnapshot>(*cached->second);
                updated->summary.run = record;
                snapshot.runs.push_back(updated);
            }
        }
        for (PendingClusterTask &pending : pendingClusterTasks(store, statesOf))
            snapshot.clusterTasks.push_back(readClusterTask(store, std::move(pending)));
        for (const RemoteRun &remote : remoteRuns(store))
            snapshot.remoteHosts[remote.runId] = remote.place.host;
    } catch (const std::exception &e) {
        snapshot.error = e.what();
        snapshot.runs.clear();
        snapshot.clusterTasks.clear();
        snapshot.remoteHosts.clear();
    }
    return snapshot;
}

} // namespace optlog
