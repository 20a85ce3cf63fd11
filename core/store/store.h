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

// A run handed to a cluster scheduler (`optlog study --scheduler slurm`): one task of a job array,
// which trains the run into a shard study of its own (never this file: SQLite must not have writers
// on several machines over a network filesystem), gathered into this study once it has ended.
struct ClusterTask
{
    std::string jobId; // the scheduler's job id, "4242"
    int64_t task = 0;  // the index in the job array
    std::string runName;
    std::string shard;              // the shard study, relative to this study's folder
    std::string state;              // the scheduler's state when last seen: PENDING, RUNNING, COMPLETED, FAILED, ...
    std::string stateAt;            // when it was seen, ISO 8601, UTC
    int64_t gatheredRunId = 0;      // the copy of the shard's run in this study; 0: not gathered
    std::string gatheredFinishedAt; // that shard run's end when it was gathered
};
struct ClusterJob
{
    std::string jobId;
    std::string scheduler; // "slurm"
    std::string plan;      // the study plan it ran, as TOML with the overrides it was given
    std::string script;    // the batch script it was submitted with
    std::string submittedAt;
    std::vector<ClusterTask> tasks; // by task index
};

// Where a run trains on another machine reached over SSH (`optlog run --host`, docs/remote.md):
// the study it trains into on that machine's own disk (SQLite never crosses a network) and its id
// there. The study holding this place keeps a copy of the run, which following brings up to date.
struct RemotePlace
{
    std::string host;   // the SSH destination it was started through: "gpu-box", "me@10.0.0.7"
    std::string optlog; // the optlog command there
    std::string study;  // the study there, absolute on that machine
    int64_t runId = 0;  // the run's id in it
    std::string log;    // the engine's output there
};
struct RemoteRun
{
    int64_t runId = 0;      // the copy's id in this study
    RemotePlace place;      // place.runId 0 and place.log empty until the host answered the start
    std::string gatheredAt; // when the ended run was copied whole from there; empty: not yet
    std::string startKey;   // this machine's key for the start; the host starts a key's run once

    bool answered() const { return place.runId > 0; }
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
class Store
{
public:
    enum class Access { ReadOnly, ReadWrite };
    static constexpr int kSchemaVersion = 12;
    static constexpr size_t kMaxNoteBytes = 8192;
    static constexpr size_t kMaxTagBytes = 64;
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

    // Curation. Each is one transaction that changes nothing when it throws StoreError, which names
    // the run and what would be right: a run that does not exist, a name in use or unfit for a
    // table, a note over kMaxNoteBytes or with control characters, a tag with spaces or controls.
    // An empty note clears it.
    void setNote(int64_t runId, const std::string &note);
    // Adds then removes tags; removing a tag the run does not have is no error.
    void changeTags(int64_t runId, const std::vector<std::string> &add, const std::vector<std::string> &remove);
    // The old name stays with the run as a former name. A run alone in its group takes its group
    // along (a group is the run's own name unless replicates share one).
    void renameRun(int64_t runId, const std::string &newName);
    void setArchived(int64_t runId, bool archived);
    // Removes the run and every row of it (metrics, validation, memory, events, numerics, tags,
    // former names, weights files and quantizations) and its weights folder. Refused for a run
    // whose engine is still at work.
    void deleteRun(int64_t runId);
    // Copies finished runs of `source` (this file is not `source`) with every row, their environment
    // and stored predictions, as new runs named `name + suffix`; all or none. Refused for a run
    // that is still running, a name already in this study, or copying a study into itself. A
    // source validated on other windows (another study seed) keeps its seed, which comparisons name.
    std::vector<int64_t> copyRunsFrom(const Store &source, const std::vector<int64_t> &runIds,
                                      const std::string &suffix = "");
    // copyRunsFrom into the study at `destination`, created when missing with the source's study
    // seed (so the copies are validated on the same windows), and removed again when the copy is
    // refused. Returns the copies' ids in the destination.
    // Removes the study file at `path` that this process made and no longer wants, with the files
    // SQLite keeps beside it.
    static void removeStudyFile(const std::string &path);
    static std::vector<int64_t> copyRunsInto(const Store &source, const std::vector<int64_t> &runIds,
                                             const std::string &destination, const std::string &suffix = "");
    // Runs on a cluster. The job and its tasks, as submitted (tasks not yet gathered).
    void addClusterJob(const ClusterJob &job);
    std::vector<ClusterJob> clusterJobs() const; // oldest first
    void setClusterTaskState(const std::string &jobId, int64_t task, const std::string &state);
    // Copies the ended run `shardRunId` of the shard `source` in as task `task` of job `jobId` records it, with
    // every row, under its own name (a run trained again has the name of its earlier attempt, as in
    // a local study). A copy gathered earlier from the same shard (by this task, or by an earlier
    // task whose run this one resumed there) is replaced, and every task of the shard refers to the
    // new one. One transaction: the run is gathered once, or not at all. Refused as copyRunsFrom()
    // refuses a run still running.
    int64_t gatherClusterRun(const Store &source, int64_t shardRunId, const std::string &jobId, int64_t task);

    // Runs on another machine. A run of this study that trains at `place`: `run` gives its name,
    // config, group, the machine's name and the engine's pid there, and its environment. One
    // transaction. Such a run is never judged dead by this machine's processes.
    // The copy of a run about to be started on a host, stored before the start is asked, with the
    // start's key: `place` names the host, its optlog and the study there (its run and log unknown
    // yet). Returns the copy's id.
    int64_t createRemoteRun(const RunRecord &run, const RemotePlace &place, const std::string &startKey);
    // What the host answered to the copy's start: the run there (place.runId, place.log) and its
    // record as the host made it (config, machine, pid, creation time, environment, group).
    void answerRemoteStart(int64_t runId, const RunRecord &started, const RemotePlace &place);
    // Removes the copy of a run its host refused to start (never answered: nothing trains there),
    // as if it had never been asked for. A copy the host answered is kept.
    void forgetUnansweredRemoteRun(int64_t runId);
    std::vector<RemoteRun> remoteRuns() const; // oldest first
    std::optional<RemotePlace> remotePlace(int64_t runId) const;
    // Replaces the copy `runId` with the ended run `sourceRunId` of `source` (the study at its
    // place, fetched), every row of it, keeping the copy's name, group and place. One transaction;
    // refused as copyRunsFrom() refuses a run still running. Returns the new copy's id.
    int64_t gatherRemoteRun(const Store &source, int64_t sourceRunId, int64_t runId);

    // Rewrites the file without its free pages: the bytes of the file (and its write-ahead log)
    // before and after.
    struct Compaction
    {
        int64_t bytesBefore = 0;
        int64_t bytesAfter = 0;
    };
    Compaction vacuum();

    // Weights on disk: a run's files live in weightsFolder(runId) ("<study file>.weights/run-<id>",
    // relative to the study's folder, as every path the study holds, so that the study and its
    // weights move together); the study holds each file's path, bytes, SHA-256 and step.
    std::string weightsFolder(int64_t runId) const;
    std::string absolutePath(const std::string &relative) const; // a path the study holds, from here
    void addWeightFile(int64_t runId, const WeightFile &file);   // replaces one of the same kind and step
    std::vector<WeightFile> weightFiles(int64_t runId) const;    // the final weights first, then by step
    // Removes the run's checkpoints, rows and files, keeping its final weights: the bytes freed.
    int64_t pruneCheckpoints(int64_t runId);
    // Makes a run that ended without completing "running" again under this process, to continue it
    // from its checkpoint at `step`: its rows after that step and its measured memory are dropped.
    void reopenRun(int64_t runId, int64_t step);
    // The same for the copy of a run that its host resumed (engine `pid` on `machine`, its output
    // in `log` there): the copy then holds what the run there holds, and follows it on from there.
    // Already reopened under that engine: nothing changes.
    void reopenRemoteRun(int64_t runId, int64_t step, int64_t pid, const std::string &machine, const std::string &log);
    // Replaces a quantization of the same scheme, group and tensors.
    void storeQuantization(int64_t runId, const QuantizationResult &result);
    std::vector<QuantizationResult> quantizations(int64_t runId) const; // oldest first

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
    void requireFreeName(const std::string &name) const;
    // Inserts `run` of `source` with every row under `name` (and `group`: empty keeps the run its
    // own group), inside the caller's transaction; its id here.
    int64_t insertCopy(const Store &source, const RunRecord &run, const std::string &name, const std::string &group);

    void removeStaleReserves() const noexcept;
    // reopenRun's work, under engine `pid` (started at `pidStart`, empty: unknown here) on `host`;
    // a copy's log there replaced by `remoteLog` unless that is empty.
    void reopenRunUnder(int64_t runId, int64_t step, int64_t pid, const std::string &pidStart, const std::string &host,
                        const std::string &remoteLog);

    std::string m_path;
    std::string m_reserve; // the reserve file while there is one
    std::unique_ptr<SQLite::Database> m_db;
};

std::string utcNow();

// The run's newest checkpoint, the one `optlog run --resume` continues from; none where it wrote none.
std::optional<WeightFile> latestCheckpoint(const Store &store, int64_t runId);

} // namespace optlog
