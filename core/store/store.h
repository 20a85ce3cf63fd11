// SPDX-License-Identifier: MIT
#pragma once

#include "core/contract/engineevents.h"
#include "core/contract/inputerror.h"
#include "core/contract/measurements.h"
#include "core/contract/memorytimeline.h"
#include "core/contract/outcome.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace SQLite {
class Database;
}

namespace optlog {

class Store;
namespace StorePrivate {
// A study's connection, for the store's own pieces only (store_p.h); nothing outside core/store
// can use it, since only they include SQLiteCpp.
SQLite::Database &database(const Store &study);
} // namespace StorePrivate

// A study file that cannot be used: not a study, a newer schema, unreadable. Nothing was changed.
class StoreError : public InputError
{
public:
    using InputError::InputError;
};

// Where a run's config came from when it was made from another run ("run again with changes").
struct RunOrigin
{
    std::string study; // the source run's study file, absolute; empty: the run was designed afresh
    int64_t runId = 0;
    std::string runName; // its name when the run was made

    bool empty() const { return study.empty(); }
};

struct RunRecord
{
    int64_t id = 0;
    std::string name;
    std::string configToml;         // the full resolved config, every field
    std::string group;              // the replicates of one run over seeds share it; else the run's name
    std::optional<Outcome> outcome; // empty while running
    int64_t outcomeStep = -1;       // the step the outcome happened at (diverged, cancelled, ...)
    std::string message;            // why it failed, diverged, crashed
    std::string createdAt;          // ISO 8601, UTC
    std::string finishedAt;
    int64_t pid = 0; // engine process
    std::string host;
    std::string environmentJson;          // library versions, threads, CPU (engine's EnvironmentInfo)
    std::string dtypesJson;               // {"weights": "bfloat16", ...}, read from the run's tensors
    std::string note;                     // the user's free text (Markdown, shown as text)
    std::vector<std::string> tags;        // sorted
    std::vector<std::string> formerNames; // oldest first: what rename replaced, still searchable
    bool archived = false;                // hidden from lists and charts, not deleted
    RunOrigin derivedFrom;
    int64_t validationSeed = 0;   // seeds the windows it was validated on: the study's, unless copied in
    int64_t lastQuantization = 0; // the id of its newest quantization (each is a new row); 0: none

    bool isFinished() const { return outcome.has_value(); }
};

// A log message of a run (the engine's events that are not measurements).
struct EventRecord
{
    std::string at; // ISO 8601, UTC
    EventKind kind = EventKind::Note;
    std::string message;
    int64_t step = -1; // the step it happened at; -1: none in particular
};

// One study file: SQLite in WAL mode with a busy timeout, so one writer (the engine) and
// any number of readers (the CLI, the GUI) work at once. The schema is versioned with
// PRAGMA user_version and migrated forward when the file is opened for writing.
// This is the study and its runs with their rows. What else a study holds has its own header:
// curating runs (core/store/curation.h), weights files and quantizations (weights.h), runs on
// other machines (remoteruns.h) and on a cluster (clusterjobs.h).
class Store
{
public:
    enum class Access { ReadOnly, ReadWrite };
    static constexpr int kSchemaVersion = 12;
    static constexpr int kApplicationId = 0x4f50544c; // "OPTL" in the SQLite header
    static constexpr int64_t kDefaultStudySeed = 1234;

    // ReadWrite creates the file when it is missing. Throws StoreError, leaving the file (and
    // its folder) untouched, for a path that is a folder or a device, a file that is not a study,
    // has a newer schema than this build knows or, for ReadWrite, cannot be written. Opening for
    // writing marks runs whose engine process is gone as crashed. ReadOnly never writes, except
    // that an older schema is migrated forward first when the file can be written.
    explicit Store(const std::string &path, Access access = Access::ReadWrite);
    ~Store();
    Store(const Store &) = delete;
    Store &operator=(const Store &) = delete;

    // Creates a new study at an older schema version: for migration tests.
    static void createAtVersion(const std::string &path, int version);

    const std::string &path() const { return m_path; }
    int schemaVersion() const;
    // Seeds the fixed validation set: every run of a study is validated on the same data.
    int64_t studySeed() const;
    // For a study without runs only: the validation windows of its runs would change.
    void setStudySeed(int64_t seed);

    // `group`: the replicates of one run over seeds share it; empty: the run is a group of its own,
    // under its name.
    // `origin`: the run whose config this one started from, if any.
    int64_t createRun(const std::string &name, const std::string &configToml, const std::string &group = "",
                      const RunOrigin &origin = {});
    void setEnvironment(int64_t runId, const std::string &environmentJson);
    void setDtypes(int64_t runId, const std::string &dtypesJson);
    // Each call is one transaction: the engine batches rows, never one transaction per row.
    void appendMetrics(int64_t runId, const std::vector<StepMetrics> &rows);
    void appendValidation(int64_t runId, const std::vector<ValidationPoint> &rows);
    // A data-parallel run keeps each rank's memory under its rank; rank 0's is the run's.
    void replaceMemory(int64_t runId, const std::vector<MemoryRow> &rows, int64_t rank = 0);
    // Its memory timelines (core/contract/memorytimeline.h): a step's replaces what it had.
    void storeTimelines(int64_t runId, const std::vector<MemoryTimeline> &timelines);
    void storeRanks(int64_t runId, const std::vector<RankRecord> &ranks);
    void addEvent(int64_t runId, EventKind kind, const std::string &message, int64_t step = -1);
    // Events with their own times (a copy's, followed from another study), in one transaction.
    void appendEvents(int64_t runId, const std::vector<EventRecord> &events);
    void appendNumerics(int64_t runId, const std::vector<TensorNumerics> &rows);
    // `at`: when it ended, ISO 8601 UTC; empty: now.
    void finishRun(int64_t runId, Outcome outcome, int64_t step, const std::string &message, const std::string &at = "");
    // Runs left "running" by an engine process that no longer exists on this host.
    int markCrashedRuns();
    // Keeps `bytes` of the disk for a run's last rows: a file beside the study (<study>-reserve-<pid>)
    // that releaseSpace() gives back, so that the outcome of a run whose disk filled still fits.
    // Removed when the Store closes; one a killed engine left is removed by the next writer.
    void reserveSpace(int64_t bytes) noexcept;
    // After a write failed for want of space: gives back the reserve, then moves the write-ahead
    // log into the file and empties it, so that a last small write (the run's outcome) fits.
    // Errors are ignored: it is an attempt.
    void releaseSpace() noexcept;
    // Makes a run that ended without completing "running" again under this process, to continue it
    // from its checkpoint at `step`: its rows after that step and its measured memory are dropped.
    void reopenRun(int64_t runId, int64_t step);
    // A path the study holds (a weights file), from here: the study holds paths relative to its
    // folder, so that the study and what it refers to move together.
    std::string absolutePath(const std::string &relative) const;

    // A run left "running" by an engine that no longer exists on this host reads as crashed, also
    // when this connection may not store it.
    std::vector<RunRecord> runs() const;
    // By id ("3") or by name (the newest run of that name).
    std::optional<RunRecord> findRun(const std::string &idOrName) const;
    // The run, or a StoreError that names the id and how to list the runs.
    RunRecord requireRun(int64_t runId) const;
    // findRun's run, or a StoreError that names what was asked for and how to list the runs: the
    // one refusal every command that takes a run's name gives.
    RunRecord requireRunNamed(const std::string &idOrName) const;
    // A run's rows in their order; `from`: from the from-th on (where a follower's copy ends).
    std::vector<StepMetrics> metrics(int64_t runId, int64_t from = 0) const;
    std::vector<ValidationPoint> validation(int64_t runId, int64_t from = 0) const;
    std::vector<MemoryRow> memory(int64_t runId, int64_t rank = 0) const;
    // By step. One this optlog cannot read (a newer one's, or damaged) is left in the file, unread.
    std::vector<MemoryTimeline> timelines(int64_t runId) const;
    std::vector<RankRecord> ranks(int64_t runId) const; // data parallel: every rank, rank 0 first; else none
    std::vector<EventRecord> events(int64_t runId, int64_t from = 0) const;
    std::vector<TensorNumerics> numerics(int64_t runId) const; // by step, then tensor

private:
    // The constructor's work after the path checks: the header checks, the connection, and for
    // writing the pragmas, migration and crash marking.
    void open(Access mode, bool isNew);
    void migrate();
    // Runs left "running" by an engine process that no longer exists on this host, and why.
    struct DeadRun
    {
        int64_t id = 0;
        int64_t lastStep = -1;
        std::string message;
    };
    std::vector<DeadRun> deadRuns() const;
    void removeStaleReserves() const noexcept;
    // The store's other pieces (curation.h, weights.h, remoteruns.h, clusterjobs.h) work on its
    // connection through store_p.h.
    friend SQLite::Database &StorePrivate::database(const Store &study);

    std::string m_path;
    std::string m_reserve; // the reserve file while there is one
    std::unique_ptr<SQLite::Database> m_db;
};

std::string utcNow();

} // namespace optlog
