// SPDX-License-Identifier: MIT
// Runs that train on another machine reached over SSH: where each one trains there, and its copy
// here replaced by the whole run once it has ended.
#include "core/store/remoteruns.h"

#include "core/store/store_p.h"

#include <algorithm>

namespace optlog {

using namespace StorePrivate;

namespace {

void insertPlace(SQLite::Database &db, int64_t runId, const RemotePlace &place, const std::string &startKey,
                 const std::string &gatheredAt = "")
{
    SQLite::Statement insert(db, "INSERT INTO remote_runs (run_id, host, optlog, study, remote_run, log, gathered_at, "
                                 "start_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    insert.bind(1, runId);
    insert.bind(2, place.host);
    insert.bind(3, place.optlog);
    insert.bind(4, place.study);
    insert.bind(5, place.runId);
    insert.bind(6, place.log);
    if (!gatheredAt.empty())
        insert.bind(7, gatheredAt);
    if (!startKey.empty())
        insert.bind(8, startKey);
    insert.exec();
}

} // namespace

int64_t createRemoteRun(Store &study, const RunRecord &run, const RemotePlace &place, const std::string &startKey)
{
    SQLite::Database &db = database(study);
    requireFreeName(study, run.name);
    return guarded(study.path(), "store the new run", [&] {
        SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
        SQLite::Statement insert(db, "INSERT INTO runs (name, config_toml, status, created_at, pid, host, "
                                     "group_name, environment) VALUES (?, ?, 'running', ?, ?, ?, ?, ?)");
        insert.bind(1, run.name);
        insert.bind(2, run.configToml);
        insert.bind(3, run.createdAt.empty() ? utcNow() : run.createdAt);
        insert.bind(4, run.pid);
        insert.bind(5, run.host);
        if (run.group.empty() || run.group == run.name)
            insert.bind(6); // NULL: a group of its own, under its name
        else
            insert.bind(6, run.group);
        insert.bind(7, run.environmentJson);
        insert.exec();
        const int64_t id = db.getLastInsertRowid();
        insertPlace(db, id, place, startKey);
        transaction.commit();
        return id;
    });
}

void answerRemoteStart(Store &study, int64_t runId, const RunRecord &started, const RemotePlace &place)
{
    SQLite::Database &db = database(study);
    study.requireRun(runId);
    guarded(study.path(), "store where the run trains", [&] {
        SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
        SQLite::Statement run(db, "UPDATE runs SET config_toml = ?, created_at = ?, pid = ?, host = ?, "
                                  "group_name = ?, environment = ? WHERE id = ?");
        run.bind(1, started.configToml);
        run.bind(2, started.createdAt);
        run.bind(3, started.pid);
        run.bind(4, started.host);
        const RunRecord copy = study.requireRun(runId);
        if (started.group.empty() || started.group == copy.name)
            run.bind(5); // NULL: a group of its own, under its name
        else
            run.bind(5, started.group);
        run.bind(6, started.environmentJson);
        run.bind(7, runId);
        run.exec();
        SQLite::Statement where(db, "UPDATE remote_runs SET remote_run = ?, log = ? WHERE run_id = ?");
        where.bind(1, place.runId);
        where.bind(2, place.log);
        where.bind(3, runId);
        where.exec();
        transaction.commit();
    });
}

void forgetUnansweredRemoteRun(Store &study, int64_t runId)
{
    guarded(study.path(), "remove the run that was not started", [&] {
        SQLite::Statement erase(database(study), "DELETE FROM runs WHERE id = ? AND id IN "
                                                 "(SELECT run_id FROM remote_runs WHERE remote_run = 0)");
        erase.bind(1, runId);
        erase.exec(); // its place goes with it
    });
}

std::vector<RemoteRun> remoteRuns(const Store &study)
{
    return guarded(study.path(), "read its runs on other machines", [&] {
        SQLite::Statement query(database(study), "SELECT run_id, host, optlog, study, remote_run, log, "
                                                 "coalesce(gathered_at, ''), coalesce(start_key, '') FROM remote_runs "
                                                 "ORDER BY run_id");
        std::vector<RemoteRun> out;
        while (query.executeStep())
            out.push_back(
                {query.getColumn(0).getInt64(),
                 {query.getColumn(1).getString(), query.getColumn(2).getString(), query.getColumn(3).getString(),
                  query.getColumn(4).getInt64(), query.getColumn(5).getString()},
                 query.getColumn(6).getString(),
                 query.getColumn(7).getString()});
        return out;
    });
}

std::optional<RemotePlace> remotePlace(const Store &study, int64_t runId)
{
    for (const RemoteRun &run : remoteRuns(study))
        if (run.runId == runId)
            return run.place;
    return std::nullopt;
}

int64_t gatherRemoteRun(Store &study, const Store &source, int64_t sourceRunId, int64_t runId)
{
    SQLite::Database &db = database(study);
    const RunRecord copy = study.requireRun(runId);
    const std::vector<RemoteRun> remote = remoteRuns(study);
    const auto found = std::find_if(remote.begin(), remote.end(), [&](const RemoteRun &r) { return r.runId == runId; });
    const std::optional<RemotePlace> place = found == remote.end() ? std::nullopt : std::optional(found->place);
    if (!place)
        throw StoreError("study '" + study.path() + "': run " + std::to_string(runId)
                         + " does not train on another machine");
    const RunRecord run = source.requireRun(sourceRunId);
    if (!run.isFinished())
        throw StoreError("the study on " + place->host + ", '" + place->study + "': run " + std::to_string(run.id)
                         + " is still running; `optlog follow` follows it to its end");
    return guarded(study.path(), "gather the run", [&] {
        SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
        SQLite::Statement erase(db, "DELETE FROM runs WHERE id = ?"); // its rows and place go with it
        erase.bind(1, runId);
        erase.exec();
        const int64_t id = insertCopy(study, source, run, copy.name, copy.group == copy.name ? "" : copy.group);
        insertPlace(db, id, *place, found->startKey, utcNow());
        transaction.commit();
        return id;
    });
}

void reopenRemoteRun(Store &study, int64_t runId, int64_t step, int64_t pid, const std::string &machine,
                     const std::string &log)
{
    reopenRunUnder(study, runId, step, pid, "", machine, log);
}

} // namespace optlog
