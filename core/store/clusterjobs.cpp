// SPDX-License-Identifier: MIT
// Runs on a cluster: the jobs a study handed to a scheduler, their tasks' states, and the runs
// gathered from the tasks' shard studies.
#include "core/store/clusterjobs.h"

#include "core/store/store_p.h"

#include <string>
#include <vector>

namespace optlog {

using namespace StorePrivate;

void addClusterJob(Store &study, const ClusterJob &job)
{
    SQLite::Database &db = database(study);
    guarded(study.path(), "record the cluster job", [&] {
        SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
        SQLite::Statement insertJob(
            db, "INSERT INTO cluster_jobs (job_id, scheduler, plan, script, submitted_at) VALUES (?, ?, ?, ?, ?)");
        insertJob.bind(1, job.jobId);
        insertJob.bind(2, job.scheduler);
        insertJob.bind(3, job.plan);
        insertJob.bind(4, job.script);
        insertJob.bind(5, job.submittedAt.empty() ? utcNow() : job.submittedAt);
        insertJob.exec();
        SQLite::Statement insertTask(db, "INSERT INTO cluster_tasks (job_id, task, run_name, shard, state, state_at) "
                                         "VALUES (?, ?, ?, ?, ?, ?)");
        for (const ClusterTask &task : job.tasks) {
            insertTask.bind(1, job.jobId);
            insertTask.bind(2, task.task);
            insertTask.bind(3, task.runName);
            insertTask.bind(4, task.shard);
            insertTask.bind(5, task.state.empty() ? std::string("PENDING") : task.state);
            insertTask.bind(6, utcNow());
            insertTask.exec();
            insertTask.reset();
        }
        // A task that resumes a run in an earlier task's shard starts with that shard's copy.
        SQLite::Statement inherit(
            db, "UPDATE cluster_tasks SET "
                "gathered_run_id = (SELECT e.gathered_run_id FROM cluster_tasks e WHERE e.shard = cluster_tasks.shard "
                "AND e.job_id != cluster_tasks.job_id AND e.gathered_run_id IS NOT NULL), "
                "gathered_finished_at = (SELECT e.gathered_finished_at FROM cluster_tasks e WHERE e.shard = "
                "cluster_tasks.shard AND e.job_id != cluster_tasks.job_id AND e.gathered_run_id IS NOT NULL) "
                "WHERE job_id = ?");
        inherit.bind(1, job.jobId);
        inherit.exec();
        transaction.commit();
    });
}

std::vector<ClusterJob> clusterJobs(const Store &study)
{
    SQLite::Database &db = database(study);
    return guarded(study.path(), "read the cluster jobs", [&] {
        std::vector<ClusterJob> jobs;
        SQLite::Statement job(db, "SELECT job_id, scheduler, plan, script, submitted_at FROM cluster_jobs "
                                  "ORDER BY submitted_at, CAST(job_id AS INTEGER)");
        SQLite::Statement task(db,
                               "SELECT task, run_name, shard, state, state_at, gathered_run_id, gathered_finished_at "
                               "FROM cluster_tasks WHERE job_id = ? ORDER BY task");
        while (job.executeStep()) {
            ClusterJob j{job.getColumn(0).getString(), job.getColumn(1).getString(), job.getColumn(2).getString(),
                         job.getColumn(3).getString(), job.getColumn(4).getString(), {}};
            task.bind(1, j.jobId);
            while (task.executeStep()) {
                ClusterTask t;
                t.jobId = j.jobId;
                t.task = task.getColumn(0).getInt64();
                t.runName = task.getColumn(1).getString();
                t.shard = task.getColumn(2).getString();
                t.state = task.getColumn(3).getString();
                t.stateAt = task.getColumn(4).getString();
                t.gatheredRunId = task.getColumn(5).isNull() ? 0 : task.getColumn(5).getInt64();
                t.gatheredFinishedAt = task.getColumn(6).getString();
                j.tasks.push_back(std::move(t));
            }
            task.reset();
            jobs.push_back(std::move(j));
        }
        return jobs;
    });
}

void setClusterTaskState(Store &study, const std::string &jobId, int64_t task, const std::string &state)
{
    guarded(study.path(), "record the cluster task's state", [&] {
        SQLite::Statement update(database(study),
                                 "UPDATE cluster_tasks SET state = ?, state_at = ? WHERE job_id = ? AND task = ? "
                                 "AND state != ?");
        update.bind(1, state);
        update.bind(2, utcNow());
        update.bind(3, jobId);
        update.bind(4, task);
        update.bind(5, state);
        update.exec();
    });
}

int64_t gatherClusterRun(Store &study, const Store &source, int64_t shardRunId, const std::string &jobId, int64_t task)
{
    SQLite::Database &db = database(study);
    const RunRecord run = source.requireRun(shardRunId);
    if (!run.isFinished())
        throw StoreError("shard '" + source.path() + "': " + runLabel(run)
                         + " is still running; gather it when its task has ended");
    return guarded(study.path(), "gather the run", [&] {
        SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
        // Every task that trained into this shard (a run resumed there by a later job) shares one copy.
        SQLite::Statement shard(db, "SELECT shard FROM cluster_tasks WHERE job_id = ? AND task = ?");
        shard.bind(1, jobId);
        shard.bind(2, task);
        if (!shard.executeStep())
            throw StoreError("study '" + study.path() + "' has no task " + std::to_string(task) + " of cluster job "
                             + jobId);
        const std::string shardPath = shard.getColumn(0).getString();
        SQLite::Statement earlier(db, "DELETE FROM runs WHERE id IN (SELECT gathered_run_id FROM cluster_tasks "
                                      "WHERE shard = ? AND gathered_run_id IS NOT NULL)");
        earlier.bind(1, shardPath);
        earlier.exec();
        const int64_t id = insertCopy(study, source, run, run.name, run.group == run.name ? "" : run.group);
        SQLite::Statement
            mark(db, "UPDATE cluster_tasks SET gathered_run_id = ?, gathered_finished_at = ? WHERE shard = ?");
        mark.bind(1, id);
        mark.bind(2, run.finishedAt);
        mark.bind(3, shardPath);
        mark.exec();
        transaction.commit();
        return id;
    });
}

} // namespace optlog
