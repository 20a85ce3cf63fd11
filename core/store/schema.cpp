// SPDX-License-Identifier: MIT
// The study's schema: one migration per version, applied in order when a study is opened for
// writing, and a study made at an older version for the migration tests.
#include "core/store/store_p.h"

#include <string>
#include <vector>

namespace optlog {

using namespace StorePrivate;

namespace {

// Each entry takes the schema from version i to i + 1. Never edit a shipped entry:
// add a new one, so that every older study file can follow the same path forward.
const std::vector<const char *> kMigrations = {
    // 0 -> 1: the run log.
    R"sql(
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        config_toml TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('running', 'finished')),
        outcome TEXT,
        outcome_step INTEGER,
        message TEXT,
        created_at TEXT NOT NULL,
        finished_at TEXT,
        pid INTEGER,
        pid_start TEXT,
        host TEXT);
    CREATE TABLE metrics (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        step INTEGER NOT NULL,
        tokens INTEGER NOT NULL,
        train_loss REAL,
        learning_rate REAL,
        grad_norm REAL,
        step_seconds REAL,
        tokens_per_second REAL,
        PRIMARY KEY (run_id, step)) WITHOUT ROWID;
    CREATE TABLE validation (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        step INTEGER NOT NULL,
        tokens INTEGER NOT NULL,
        loss REAL,
        PRIMARY KEY (run_id, step)) WITHOUT ROWID;
    CREATE TABLE events (
        id INTEGER PRIMARY KEY,
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        at TEXT NOT NULL,
        kind TEXT NOT NULL,
        message TEXT NOT NULL);
    CREATE INDEX events_by_run ON events(run_id);
    )sql",
    // 1 -> 2: memory by role (predicted beside measured) and the run's environment.
    R"sql(
    CREATE TABLE memory (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        role TEXT NOT NULL,
        source TEXT NOT NULL CHECK (source IN ('predicted', 'measured')),
        dtype TEXT NOT NULL,
        bytes INTEGER NOT NULL,
        PRIMARY KEY (run_id, role, source)) WITHOUT ROWID;
    ALTER TABLE runs ADD COLUMN environment TEXT;
    )sql",
    // 2 -> 3: the precision techniques: the loss scaler per step, the dtype of every state per run.
    R"sql(
    ALTER TABLE metrics ADD COLUMN loss_scale REAL;
    ALTER TABLE metrics ADD COLUMN skipped INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE runs ADD COLUMN dtypes TEXT;
    )sql",
    // 3 -> 4: the machine-speed index, timed every few steps (NULL on the others).
    R"sql(
    ALTER TABLE metrics ADD COLUMN machine_gflops REAL;
    )sql",
    // 4 -> 5: decisions with error bars. Replicates of a run over seeds share a group (NULL: the
    // run's own name); a validation point keeps the spread of its sequences' losses; an event the
    // step it happened at (instability); and what 16-bit formats would do to each tensor.
    R"sql(
    ALTER TABLE runs ADD COLUMN group_name TEXT;
    ALTER TABLE validation ADD COLUMN sequences INTEGER;
    ALTER TABLE validation ADD COLUMN sequence_sd REAL;
    ALTER TABLE events ADD COLUMN step INTEGER;
    CREATE TABLE numerics (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        step INTEGER NOT NULL,
        tensor TEXT NOT NULL,
        fp16_underflow REAL,
        fp16_subnormal REAL,
        scaled_underflow REAL,
        loss_scale REAL,
        vanishing_updates REAL,
        activation_max REAL,
        PRIMARY KEY (run_id, step, tensor)) WITHOUT ROWID;
    )sql",
    // 5 -> 6: a study you can curate. A note and tags per run; the names rename replaced; archived
    // runs (hidden, kept); the run a config was taken from; the seed of the validation windows of a
    // run copied in from a study with another seed (NULL: this study's).
    R"sql(
    ALTER TABLE runs ADD COLUMN note TEXT;
    ALTER TABLE runs ADD COLUMN archived INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE runs ADD COLUMN derived_from_study TEXT;
    ALTER TABLE runs ADD COLUMN derived_from_run INTEGER;
    ALTER TABLE runs ADD COLUMN derived_from_name TEXT;
    ALTER TABLE runs ADD COLUMN validation_seed INTEGER;
    CREATE TABLE tags (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        tag TEXT NOT NULL,
        PRIMARY KEY (run_id, tag)) WITHOUT ROWID;
    CREATE TABLE former_names (
        id INTEGER PRIMARY KEY,
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        renamed_at TEXT NOT NULL);
    CREATE INDEX former_names_by_run ON former_names(run_id);
    )sql",
    // 6 -> 7: weights on disk (final weights and checkpoints beside the study) and post-training
    // quantizations of a run's final weights, with each tensor's sensitivity.
    R"sql(
    CREATE TABLE weight_files (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        kind TEXT NOT NULL CHECK (kind IN ('final', 'checkpoint')),
        step INTEGER NOT NULL,
        path TEXT NOT NULL,
        bytes INTEGER NOT NULL,
        sha256 TEXT NOT NULL,
        written_at TEXT NOT NULL,
        PRIMARY KEY (run_id, kind, step)) WITHOUT ROWID;
    CREATE TABLE quantizations (
        id INTEGER PRIMARY KEY,
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        scheme TEXT NOT NULL,
        group_size INTEGER NOT NULL,
        tensors TEXT NOT NULL,
        int8_tensors TEXT NOT NULL,
        quantized_weights INTEGER NOT NULL,
        total_weights INTEGER NOT NULL,
        code_bytes INTEGER NOT NULL,
        scale_bytes INTEGER NOT NULL,
        zero_point_bytes INTEGER NOT NULL,
        float_bytes INTEGER NOT NULL,
        float_dtype TEXT NOT NULL,
        workspace_bytes INTEGER NOT NULL,
        activation_bytes INTEGER NOT NULL,
        base_loss REAL,
        loss REAL,
        kl REAL,
        top1_agreement REAL,
        created_at TEXT NOT NULL,
        UNIQUE (run_id, scheme, group_size, tensors));
    CREATE TABLE quantization_sensitivity (
        quantization_id INTEGER NOT NULL REFERENCES quantizations(id) ON DELETE CASCADE,
        tensor TEXT NOT NULL,
        loss_delta REAL,
        PRIMARY KEY (quantization_id, tensor)) WITHOUT ROWID;
    )sql",
    // 7 -> 8: data-parallel runs: memory by role per rank, rank 0's time in collectives per step,
    // and each rank's host, environment and step times.
    R"sql(
    CREATE TABLE memory_by_rank (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        rank INTEGER NOT NULL DEFAULT 0,
        role TEXT NOT NULL,
        source TEXT NOT NULL CHECK (source IN ('predicted', 'measured')),
        dtype TEXT NOT NULL,
        bytes INTEGER NOT NULL,
        PRIMARY KEY (run_id, rank, role, source)) WITHOUT ROWID;
    INSERT INTO memory_by_rank (run_id, rank, role, source, dtype, bytes)
        SELECT run_id, 0, role, source, dtype, bytes FROM memory;
    DROP TABLE memory;
    ALTER TABLE memory_by_rank RENAME TO memory;
    ALTER TABLE metrics ADD COLUMN communication_seconds REAL;
    CREATE TABLE ranks (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        rank INTEGER NOT NULL,
        host TEXT NOT NULL,
        pid INTEGER,
        environment TEXT,
        measured_steps INTEGER NOT NULL,
        step_seconds REAL,
        communication_seconds REAL,
        outcome TEXT NOT NULL,
        message TEXT NOT NULL,
        PRIMARY KEY (run_id, rank)) WITHOUT ROWID;
    )sql",
    // 8 -> 9: runs handed to a cluster scheduler: each job with the plan and batch script it was
    // submitted with, and each array task with its run, its shard study, the scheduler's last state
    // seen, and the run gathered from its shard (with the shard run's end, so that a run resumed in
    // its shard is gathered again, replacing the earlier copy).
    R"sql(
    CREATE TABLE cluster_jobs (
        job_id TEXT PRIMARY KEY,
        scheduler TEXT NOT NULL,
        plan TEXT NOT NULL,
        script TEXT NOT NULL,
        submitted_at TEXT NOT NULL) WITHOUT ROWID;
    CREATE TABLE cluster_tasks (
        job_id TEXT NOT NULL REFERENCES cluster_jobs(job_id) ON DELETE CASCADE,
        task INTEGER NOT NULL,
        run_name TEXT NOT NULL,
        shard TEXT NOT NULL,
        state TEXT NOT NULL,
        state_at TEXT NOT NULL,
        gathered_run_id INTEGER REFERENCES runs(id) ON DELETE SET NULL,
        gathered_finished_at TEXT,
        PRIMARY KEY (job_id, task)) WITHOUT ROWID;
    )sql",
    // 9 -> 10: runs that train on another machine reached over SSH (`optlog run --host`): the
    // destination they were started through, the optlog command there, the study they train into
    // on that machine's own disk, their id in it, the engine's output file there, and when the
    // whole run was last gathered from there.
    R"sql(
    CREATE TABLE remote_runs (
        run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
        host TEXT NOT NULL,
        optlog TEXT NOT NULL,
        study TEXT NOT NULL,
        remote_run INTEGER NOT NULL,
        log TEXT NOT NULL,
        gathered_at TEXT);
    )sql",
    // 10 -> 11: the key this machine gave a run's start on its host before asking for it, so that
    // a start whose answer was lost can be asked again without starting the run twice. The copy is
    // stored before the start is asked: until the host answers, remote_run is 0 and log is empty.
    R"sql(
    ALTER TABLE remote_runs ADD COLUMN start_key TEXT;
    )sql",
    // 11 -> 12: a run's memory timelines, one per step recorded (its first, its first measured), each
    // as the JSON object core/contract/memorytimeline.h writes: a few thousand points at most.
    R"sql(
    CREATE TABLE memory_timelines (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        step INTEGER NOT NULL,
        timeline TEXT NOT NULL,
        PRIMARY KEY (run_id, step)) WITHOUT ROWID;
    )sql",
};

} // namespace

void Store::createAtVersion(const std::string &path, int version)
{
    SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE, kBusyTimeoutMs);
    db.exec("PRAGMA application_id = " + std::to_string(kApplicationId));
    for (int v = 0; v < version; ++v)
        db.exec(kMigrations.at(size_t(v)));
    db.exec("PRAGMA user_version = " + std::to_string(version));
}

int Store::schemaVersion() const
{
    return m_db->execAndGet("PRAGMA user_version").getInt();
}

void Store::migrate()
{
    if (kMigrations.size() != size_t(kSchemaVersion))
        throw StoreError("internal: kMigrations must hold one entry per schema version");
    // One transaction per version, the version read inside it (another process may have migrated
    // meanwhile), and each step's pages checkpointed into the file with the write-ahead log emptied:
    // the log then never holds more than one step, so that a study can be created or migrated on a
    // nearly full disk, and leaves room there for the run's reserve.
    while (true) {
        SQLite::Transaction transaction(*m_db, SQLite::TransactionBehavior::IMMEDIATE);
        const int version = schemaVersion();
        if (version >= kSchemaVersion)
            break;
        if (version == 0)
            m_db->exec("PRAGMA application_id = " + std::to_string(kApplicationId));
        m_db->exec(kMigrations.at(size_t(version)));
        if (version == 0) {
            SQLite::Statement seed(*m_db, "INSERT INTO meta (key, value) VALUES ('study_seed', ?)");
            seed.bind(1, std::to_string(kDefaultStudySeed));
            seed.exec();
        }
        m_db->exec("PRAGMA user_version = " + std::to_string(version + 1));
        transaction.commit();
        m_db->exec("PRAGMA wal_checkpoint(TRUNCATE)");
    }
}

} // namespace optlog
