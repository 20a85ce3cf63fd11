// SPDX-License-Identifier: MIT
// The store's own helpers, shared by its pieces (schema, study file, writes, reads, curation,
// weights, runs elsewhere, cluster jobs): the study's connection, a study operation's errors as StoreError, the row statements and how rows are bound
// and read, and who is writing. Only core/store includes it.
#pragma once

#include "core/store/store.h"

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace optlog::StorePrivate {

// How long a statement waits for another connection's lock before it fails, in milliseconds.
constexpr int kBusyTimeoutMs = 10000;

// The files SQLite keeps beside a study: its write-ahead log and its shared-memory index.
inline constexpr const char *kSideFileSuffixes[] = {"-wal", "-shm"};

// The kernel's start time of a process (clock ticks since boot), so a recycled pid is not
// mistaken for the engine that wrote the run. Empty when the process does not exist.
std::string processStartTime(int64_t pid);

// Runs one read or write of the study: an SQLite error (a full disk, an I/O error, a file made
// read-only or damaged meanwhile) becomes a StoreError that names the study and what failed.
template<typename Operation>
auto guarded(const std::string &path, const char *what, Operation operation)
{
    try {
        return operation();
    } catch (const SQLite::Exception &e) {
        throw StoreError("study '" + path + "': cannot " + what + ": " + e.what());
    }
}

// Runs `sql` (an insert, a delete) once per row of one run: `bind` binds a row's columns after the
// first (the run's id). In the caller's transaction, so a batch is one write.
template<typename Row, typename Bind>
void executeEach(SQLite::Database &db, const char *sql, int64_t runId, const std::vector<Row> &rows, Bind bind)
{
    SQLite::Statement insert(db, sql);
    for (const auto &row : rows) {
        insert.bind(1, runId);
        bind(insert, row);
        insert.exec();
        insert.reset();
    }
}

// Appends `rows` of one run in one transaction (a batch is one write); nothing for no rows.
template<typename Row, typename Bind>
void appendEach(SQLite::Database &db, const char *sql, int64_t runId, const std::vector<Row> &rows, Bind bind)
{
    if (rows.empty())
        return;
    SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
    executeEach(db, sql, runId, rows, bind);
    transaction.commit();
}

inline void readColumn(const SQLite::Column &column, int64_t &value)
{
    value = column.getInt64();
}
// SQLite stores a NaN as NULL: read back, it is NaN again (a diverged loss, a skipped step's norm).
inline void readColumn(const SQLite::Column &column, double &value)
{
    value = column.isNull() ? std::numeric_limits<double>::quiet_NaN() : column.getDouble();
}
inline void readColumn(const SQLite::Column &column, bool &value)
{
    value = column.getInt() != 0;
}
inline void readColumn(const SQLite::Column &column, std::string &value)
{
    value = column.getString();
}

// A row of the statement's current result: its columns, in order, into the given members.
template<typename Row, typename... Members>
Row readColumns(SQLite::Statement &query, Members Row::*...members)
{
    Row row;
    int column = 0;
    (readColumn(query.getColumn(column++), row.*members), ...);
    return row;
}

// The rows `sql` selects for one run (its one parameter), each made by `read` from the columns;
// a row `read` makes nothing of is left out.
template<typename Row, typename Read>
std::vector<Row> selectEach(SQLite::Database &db, const char *sql, int64_t runId, Read read)
{
    SQLite::Statement query(db, sql);
    query.bind(1, runId);
    std::vector<Row> out;
    while (query.executeStep())
        if (std::optional<Row> row = read(query))
            out.push_back(std::move(*row));
    return out;
}

// The insert of each kind of row a run has, shared by the engine's appends and copyRunsFrom.
constexpr const char *kInsertMetrics
    = "INSERT OR REPLACE INTO metrics (run_id, step, tokens, train_loss, learning_rate, grad_norm, step_seconds, "
      "tokens_per_second, loss_scale, skipped, machine_gflops, communication_seconds) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
inline void bindMetrics(SQLite::Statement &insert, const StepMetrics &row)
{
    insert.bind(2, row.step);
    insert.bind(3, row.tokens);
    insert.bind(4, row.trainLoss);
    insert.bind(5, row.learningRate);
    insert.bind(6, row.gradNorm);
    insert.bind(7, row.stepSeconds);
    insert.bind(8, row.tokensPerSecond);
    insert.bind(9, row.lossScale);
    insert.bind(10, int(row.skipped));
    if (row.machineGflops > 0)
        insert.bind(11, row.machineGflops);
    else
        insert.bind(11); // NULL: not timed at this step
    if (row.communicationSeconds)
        insert.bind(12, *row.communicationSeconds);
    else
        insert.bind(12); // NULL: one rank, no collectives
}

constexpr const char *kInsertValidation = "INSERT OR REPLACE INTO validation (run_id, step, tokens, loss, sequences, "
                                          "sequence_sd) VALUES (?, ?, ?, ?, ?, ?)";
inline void bindValidation(SQLite::Statement &insert, const ValidationPoint &row)
{
    insert.bind(2, row.step);
    insert.bind(3, row.tokens);
    insert.bind(4, row.loss);
    insert.bind(5, row.sequences);
    insert.bind(6, row.sequenceSd);
}

constexpr const char *kInsertMemory
    = "INSERT INTO memory (run_id, role, source, dtype, bytes, rank) VALUES (?, ?, ?, ?, ?, ?)";
// The rows of one rank.
inline auto bindMemoryOf(int64_t rank)
{
    return [rank](SQLite::Statement &insert, const MemoryRow &row) {
        insert.bind(2, memoryRoleName(row.role));
        insert.bind(3, memorySourceName(row.source));
        insert.bind(4, row.dtype);
        insert.bind(5, row.bytes);
        insert.bind(6, rank);
    };
}

constexpr const char *kInsertTimeline
    = "INSERT OR REPLACE INTO memory_timelines (run_id, step, timeline) VALUES (?, ?, ?)";
inline void bindTimeline(SQLite::Statement &insert, const MemoryTimeline &timeline)
{
    insert.bind(2, timeline.step);
    insert.bind(3, timelineText(timeline));
}

constexpr const char *kInsertRank
    = "INSERT OR REPLACE INTO ranks (run_id, rank, host, pid, environment, measured_steps, step_seconds, "
      "communication_seconds, outcome, message) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
inline void bindRank(SQLite::Statement &insert, const RankRecord &row)
{
    insert.bind(2, row.rank);
    insert.bind(3, row.host);
    insert.bind(4, row.pid);
    insert.bind(5, row.environmentJson);
    insert.bind(6, row.measuredSteps);
    insert.bind(7, row.stepSeconds);
    insert.bind(8, row.communicationSeconds);
    insert.bind(9, row.outcome);
    insert.bind(10, row.message);
}

constexpr const char *kInsertNumerics
    = "INSERT OR REPLACE INTO numerics (run_id, step, tensor, fp16_underflow, fp16_subnormal, scaled_underflow, "
      "loss_scale, vanishing_updates, activation_max) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)";
inline void bindNumerics(SQLite::Statement &insert, const TensorNumerics &row)
{
    insert.bind(2, row.step);
    insert.bind(3, row.tensor);
    // NaN binds as NULL: not applicable to this tensor
    insert.bind(4, row.fp16Underflow);
    insert.bind(5, row.fp16Subnormal);
    insert.bind(6, row.scaledUnderflow);
    insert.bind(7, row.lossScale);
    insert.bind(8, row.vanishingUpdates);
    insert.bind(9, row.activationMax);
}

constexpr const char *kInsertEvent = "INSERT INTO events (run_id, at, kind, message, step) VALUES (?, ?, ?, ?, ?)";
inline void bindEvent(SQLite::Statement &insert, const EventRecord &row)
{
    insert.bind(2, row.at);
    insert.bind(3, eventKindName(row.kind));
    insert.bind(4, row.message);
    if (row.step >= 0)
        insert.bind(5, row.step);
    else
        insert.bind(5); // NULL: no step in particular
}

// "run 3 (fp32)": how messages name a run.
std::string runLabel(const RunRecord &run);

// Refuses a name that no new run of `study` may take: one in use, or unfit for a table.
void requireFreeName(const Store &study, const std::string &name);
// Inserts `run` of `source` into `study` with every row under `name` (and `group`: empty keeps the
// run its own group), inside the caller's transaction; its id in `study`.
int64_t insertCopy(Store &study, const Store &source, const RunRecord &run, const std::string &name,
                   const std::string &group);
// Store::reopenRun's work, under engine `pid` (started at `pidStart`, empty: unknown here) on
// `host`; a copy's log there replaced by `remoteLog` unless that is empty.
void reopenRunUnder(Store &study, int64_t runId, int64_t step, int64_t pid, const std::string &pidStart,
                    const std::string &host, const std::string &remoteLog);

} // namespace optlog::StorePrivate
