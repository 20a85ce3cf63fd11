// SPDX-License-Identifier: MIT
// What the engine writes while a run trains: the run itself, its measurements in batches (one
// transaction each), its events and its outcome; and reopening a run to continue it from a checkpoint.
#include "core/contract/thismachine.h"
#include "core/store/store_p.h"

#include <ctime>

#include <unistd.h>

namespace optlog {

using namespace StorePrivate;

std::string utcNow()
{
    std::time_t now = std::time(nullptr);
    std::tm parts{};
    gmtime_r(&now, &parts);
    char text[32];
    std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &parts);
    return text;
}

int64_t Store::createRun(const std::string &name, const std::string &configToml, const std::string &group,
                         const RunOrigin &origin)
{
    return guarded(m_path, "store the new run", [&] {
        SQLite::Statement insert(*m_db,
                                 "INSERT INTO runs (name, config_toml, status, created_at, pid, pid_start, host, "
                                 "group_name, derived_from_study, derived_from_run, derived_from_name) "
                                 "VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?)");
        const int64_t pid = getpid();
        insert.bind(1, name);
        insert.bind(2, configToml);
        insert.bind(3, utcNow());
        insert.bind(4, pid);
        insert.bind(5, processStartTime(pid));
        insert.bind(6, thisMachine());
        if (group.empty())
            insert.bind(7); // NULL: a group of its own, under its name
        else
            insert.bind(7, group);
        if (!origin.empty()) {
            insert.bind(8, origin.study);
            insert.bind(9, origin.runId);
            insert.bind(10, origin.runName);
        }
        insert.exec();
        return m_db->getLastInsertRowid();
    });
}

void Store::setEnvironment(int64_t runId, const std::string &environmentJson)
{
    return guarded(m_path, "store the run's environment", [&] {
        SQLite::Statement update(*m_db, "UPDATE runs SET environment = ? WHERE id = ?");
        update.bind(1, environmentJson);
        update.bind(2, runId);
        update.exec();
    });
}

void Store::setDtypes(int64_t runId, const std::string &dtypesJson)
{
    return guarded(m_path, "store the run's dtypes", [&] {
        SQLite::Statement update(*m_db, "UPDATE runs SET dtypes = ? WHERE id = ?");
        update.bind(1, dtypesJson);
        update.bind(2, runId);
        update.exec();
    });
}

void Store::appendMetrics(int64_t runId, const std::vector<StepMetrics> &rows)
{
    return guarded(m_path, "store metrics", [&] { appendEach(*m_db, kInsertMetrics, runId, rows, bindMetrics); });
}

void Store::appendValidation(int64_t runId, const std::vector<ValidationPoint> &rows)
{
    return guarded(m_path, "store validation losses",
                   [&] { appendEach(*m_db, kInsertValidation, runId, rows, bindValidation); });
}

void Store::replaceMemory(int64_t runId, const std::vector<MemoryRow> &rows, int64_t rank)
{
    return guarded(m_path, "store memory by role", [&] {
        SQLite::Transaction transaction(*m_db, SQLite::TransactionBehavior::IMMEDIATE);
        SQLite::Statement clear(*m_db, "DELETE FROM memory WHERE run_id = ? AND rank = ?");
        clear.bind(1, runId);
        clear.bind(2, rank);
        clear.exec();
        executeEach(*m_db, kInsertMemory, runId, rows, bindMemoryOf(rank));
        transaction.commit();
    });
}

void Store::storeTimelines(int64_t runId, const std::vector<MemoryTimeline> &timelines)
{
    return guarded(m_path, "store memory timelines",
                   [&] { executeEach(*m_db, kInsertTimeline, runId, timelines, bindTimeline); });
}

void Store::storeRanks(int64_t runId, const std::vector<RankRecord> &ranks)
{
    return guarded(m_path, "store the ranks", [&] { appendEach(*m_db, kInsertRank, runId, ranks, bindRank); });
}

void Store::addEvent(int64_t runId, EventKind kind, const std::string &message, int64_t step)
{
    return guarded(m_path, "store an event", [&] {
        executeEach(*m_db, kInsertEvent, runId, std::vector<EventRecord>{{utcNow(), kind, message, step}}, bindEvent);
    });
}

void Store::appendEvents(int64_t runId, const std::vector<EventRecord> &events)
{
    return guarded(m_path, "store events", [&] { appendEach(*m_db, kInsertEvent, runId, events, bindEvent); });
}

void Store::appendNumerics(int64_t runId, const std::vector<TensorNumerics> &rows)
{
    return guarded(m_path, "store numerics", [&] { appendEach(*m_db, kInsertNumerics, runId, rows, bindNumerics); });
}

void Store::finishRun(int64_t runId, Outcome outcome, int64_t step, const std::string &message, const std::string &at)
{
    return guarded(m_path, "store the run's outcome", [&] {
        SQLite::Statement update(*m_db, "UPDATE runs SET status = 'finished', outcome = ?, outcome_step = ?, "
                                        "message = ?, finished_at = ? WHERE id = ?");
        update.bind(1, outcomeName(outcome));
        update.bind(2, step);
        update.bind(3, message);
        update.bind(4, at.empty() ? utcNow() : at);
        update.bind(5, runId);
        update.exec();
    });
}

void Store::reopenRun(int64_t runId, int64_t step)
{
    const int64_t pid = getpid();
    reopenRunUnder(*this, runId, step, pid, processStartTime(pid), thisMachine(), "");
}

void StorePrivate::reopenRunUnder(Store &study, int64_t runId, int64_t step, int64_t pid, const std::string &pidStart,
                                  const std::string &host, const std::string &remoteLog)
{
    SQLite::Database &db = database(study);
    study.requireRun(runId);
    guarded(study.path(), "reopen the run", [&] {
        SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
        // Reopened under this engine already (a resume answered twice): its rows since are kept.
        SQLite::Statement current(db, "SELECT status = 'running' AND pid = ? AND host = ? FROM runs WHERE id = ?");
        current.bind(1, pid);
        current.bind(2, host);
        current.bind(3, runId);
        if (current.executeStep() && current.getColumn(0).getInt() == 1)
            return;
        for (const char *table : {"metrics", "validation", "numerics", "weight_files", "memory_timelines"}) {
            SQLite::Statement erase(db, std::string("DELETE FROM ") + table + " WHERE run_id = ? AND step > ?");
            erase.bind(1, runId);
            erase.bind(2, step);
            erase.exec();
        }
        SQLite::Statement measured(db, "DELETE FROM memory WHERE run_id = ? AND source = ?");
        measured.bind(1, runId);
        measured.bind(2, memorySourceName(MemorySource::Measured));
        measured.exec();
        SQLite::Statement update(db, "UPDATE runs SET status = 'running', outcome = NULL, outcome_step = NULL, "
                                     "message = NULL, finished_at = NULL, pid = ?, pid_start = ?, host = ? "
                                     "WHERE id = ?");
        update.bind(1, pid);
        update.bind(2, pidStart);
        update.bind(3, host);
        update.bind(4, runId);
        update.exec();
        // A copy of a run elsewhere, gathered whole once it had ended, is to be gathered again, and
        // its engine there writes another log.
        SQLite::Statement regather(db, "UPDATE remote_runs SET gathered_at = NULL, log = coalesce(nullif(?, ''), "
                                       "log) WHERE run_id = ?");
        regather.bind(1, remoteLog);
        regather.bind(2, runId);
        regather.exec();
        transaction.commit();
    });
}

} // namespace optlog
