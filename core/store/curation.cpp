// SPDX-License-Identifier: MIT
// Curation: a run's note, tags, name and archived flag, deleting runs, copying runs between
// studies, and compacting the file. Each checks what it is given and names the run it refuses.
#include "core/store/curation.h"

#include "core/contract/format.h"
#include "core/store/store_p.h"
#include "core/store/weights.h"

#include <algorithm>
#include <filesystem>
#include <memory>

namespace optlog {

namespace StorePrivate {

std::string runLabel(const RunRecord &run)
{
    return "run " + std::to_string(run.id) + " (" + printable(run.name) + ")";
}

} // namespace StorePrivate

using namespace StorePrivate;

namespace {

// Why `name` cannot name a run, or empty when it can: a run's name is one line of plain text.
std::string nameProblem(const std::string &name)
{
    if (name.empty())
        return "a run's name cannot be empty";
    if (const std::string problem = unprintableCharacter(name); !problem.empty())
        return "the name \"" + printable(name) + "\" holds " + problem + "; a name is one line of plain text";
    if (name.size() > kMaxNameBytes)
        return "the name is " + std::to_string(name.size()) + " bytes long: at most " + std::to_string(kMaxNameBytes)
               + " bytes";
    return {};
}

// Why `note` cannot be stored, or empty when it can: text of lines and tabs, of bounded length.
std::string noteProblem(const std::string &note)
{
    if (note.size() > kMaxNoteBytes)
        return "the note is " + std::to_string(note.size()) + " bytes long: at most " + std::to_string(kMaxNoteBytes)
               + " bytes (about a page)";
    std::string lines = note; // line breaks and tabs are a note's own; other controls are not
    for (char &c : lines)
        if (c == '\n' || c == '\t')
            c = ' ';
    if (const std::string problem = unprintableCharacter(lines); !problem.empty())
        return "the note holds " + problem + "; a note is plain text in lines (Markdown is shown as text)";
    return {};
}

// Why `tag` cannot be a tag, or empty when it can: one word a filter can name (tag:long).
std::string tagProblem(const std::string &tag)
{
    if (tag.empty())
        return "a tag cannot be empty";
    if (const std::string problem = unprintableCharacter(tag); !problem.empty())
        return "the tag \"" + printable(tag) + "\" holds " + problem;
    if (tag.find_first_of(" ,") != std::string::npos)
        return "the tag \"" + tag + "\" holds a " + (tag.find(' ') != std::string::npos ? "space" : "comma")
               + "; a tag is one word, such as long-context or baseline_v2";
    if (tag.front() == '+' || tag.front() == '-')
        return "the tag \"" + tag + "\" starts with " + std::string(1, tag.front())
               + ", which `optlog tag` reads as add or remove";
    if (tag.size() > kMaxTagBytes)
        return "the tag is " + std::to_string(tag.size()) + " bytes long: at most " + std::to_string(kMaxTagBytes)
               + " bytes";
    return {};
}

int64_t fileBytes(const std::string &path)
{
    std::error_code error;
    const auto size = std::filesystem::file_size(path, error);
    return error ? 0 : int64_t(size);
}

void bindTag(SQLite::Statement &statement, const std::string &tag)
{
    statement.bind(2, tag);
}

} // namespace

void StorePrivate::requireFreeName(const Store &study, const std::string &name)
{
    if (const std::string problem = nameProblem(name); !problem.empty())
        throw StoreError("study '" + study.path() + "': " + problem);
    for (const RunRecord &run : study.runs())
        if (run.name == name)
            throw StoreError("study '" + study.path() + "' already has a run named \"" + printable(name) + "\" ("
                             + runLabel(run) + "); choose another name");
}

void setNote(Store &study, int64_t runId, const std::string &note)
{
    const RunRecord run = study.requireRun(runId);
    if (const std::string problem = noteProblem(note); !problem.empty())
        throw StoreError("study '" + study.path() + "', " + runLabel(run) + ": " + problem);
    guarded(study.path(), "store the note", [&] {
        SQLite::Statement update(database(study), "UPDATE runs SET note = ? WHERE id = ?");
        if (note.empty())
            update.bind(1);
        else
            update.bind(1, note);
        update.bind(2, runId);
        update.exec();
    });
}

void changeTags(Store &study, int64_t runId, const std::vector<std::string> &add, const std::vector<std::string> &remove)
{
    SQLite::Database &db = database(study);
    const RunRecord run = study.requireRun(runId);
    for (const auto &tag : add)
        if (const std::string problem = tagProblem(tag); !problem.empty())
            throw StoreError("study '" + study.path() + "', " + runLabel(run) + ": " + problem);
    guarded(study.path(), "store the tags", [&] {
        SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
        executeEach(db, "INSERT OR IGNORE INTO tags (run_id, tag) VALUES (?, ?)", runId, add, bindTag);
        executeEach(db, "DELETE FROM tags WHERE run_id = ? AND tag = ?", runId, remove, bindTag);
        transaction.commit();
    });
}

void renameRun(Store &study, int64_t runId, const std::string &newName)
{
    SQLite::Database &db = database(study);
    const RunRecord run = study.requireRun(runId);
    if (newName == run.name)
        return;
    requireFreeName(study, newName);
    guarded(study.path(), "rename the run", [&] {
        SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
        SQLite::Statement former(db, "INSERT INTO former_names (run_id, name, renamed_at) VALUES (?, ?, ?)");
        former.bind(1, runId);
        former.bind(2, run.name);
        former.bind(3, utcNow());
        former.exec();
        SQLite::Statement update(db, "UPDATE runs SET name = ? WHERE id = ?");
        update.bind(1, newName);
        update.bind(2, runId);
        update.exec();
        transaction.commit();
    });
}

void setArchived(Store &study, int64_t runId, bool archived)
{
    study.requireRun(runId);
    guarded(study.path(), "archive the run", [&] {
        SQLite::Statement update(database(study), "UPDATE runs SET archived = ? WHERE id = ?");
        update.bind(1, int(archived));
        update.bind(2, runId);
        update.exec();
    });
}

void deleteRun(Store &study, int64_t runId)
{
    SQLite::Database &db = database(study);
    const RunRecord run = study.requireRun(runId);
    const std::vector<WeightFile> files = weightFiles(study, runId);
    if (!run.isFinished())
        throw StoreError(
            "study '" + study.path() + "': " + runLabel(run) + " is running (engine process " + std::to_string(run.pid)
            + " on " + run.host
            + "); cancel it first (Run › Cancel in the workbench, or stop its `optlog run`), then delete it");
    guarded(study.path(), "delete the run", [&] {
        // Every row of the run goes with it: each table references runs(id) ON DELETE CASCADE.
        SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
        SQLite::Statement erase(db, "DELETE FROM runs WHERE id = ?");
        erase.bind(1, runId);
        erase.exec();
        transaction.commit();
    });
    // Its weights files too, once no row refers to them, and their folder when that leaves it empty.
    std::error_code ignored;
    for (const WeightFile &file : files) {
        const std::filesystem::path path = study.absolutePath(file.path);
        std::filesystem::remove(path, ignored);
        std::filesystem::remove(path.parent_path(), ignored); // only an empty folder goes
    }
}

std::vector<int64_t> copyRunsFrom(Store &study, const Store &source, const std::vector<int64_t> &runIds,
                                  const std::string &suffix)
{
    std::error_code error;
    if (std::filesystem::equivalent(source.path(), study.path(), error))
        throw StoreError("cannot copy runs of study '" + study.path() + "' into itself; choose another destination");
    std::vector<RunRecord> copies;
    std::vector<std::string> names;
    for (const int64_t id : runIds) {
        RunRecord run = source.requireRun(id);
        if (!run.isFinished())
            throw StoreError("study '" + source.path() + "': " + runLabel(run)
                             + " is still running; copy it when it has finished");
        const std::string name = run.name + suffix;
        requireFreeName(study, name);
        if (std::find(names.begin(), names.end(), name) != names.end())
            throw StoreError("study '" + source.path() + "': two of the runs to copy are named \"" + printable(name)
                             + "\"; copy them one at a time with different --suffix values");
        names.push_back(name);
        copies.push_back(std::move(run));
    }
    return guarded(study.path(), "copy the runs", [&] {
        SQLite::Transaction transaction(database(study), SQLite::TransactionBehavior::IMMEDIATE);
        std::vector<int64_t> ids;
        for (size_t i = 0; i < copies.size(); ++i) {
            const RunRecord &run = copies[i];
            // A run that is its own group stays its own group under its new name; replicates keep
            // theirs, marked like their names.
            ids.push_back(insertCopy(study, source, run, names[i], run.group == run.name ? "" : run.group + suffix));
        }
        transaction.commit();
        return ids;
    });
}

int64_t StorePrivate::insertCopy(Store &study, const Store &source, const RunRecord &run, const std::string &name,
                                 const std::string &group)
{
    SQLite::Database &db = database(study);
    SQLite::Statement insert(db,
                             "INSERT INTO runs (name, config_toml, status, outcome, outcome_step, message, created_at, "
                             "finished_at, pid, host, environment, dtypes, group_name, note, archived, "
                             "derived_from_study, derived_from_run, derived_from_name, validation_seed) "
                             "VALUES (?, ?, 'finished', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    insert.bind(1, name);
    insert.bind(2, run.configToml);
    insert.bind(3, outcomeName(*run.outcome));
    insert.bind(4, run.outcomeStep);
    insert.bind(5, run.message);
    insert.bind(6, run.createdAt);
    insert.bind(7, run.finishedAt);
    insert.bind(8, run.pid);
    insert.bind(9, run.host);
    insert.bind(10, run.environmentJson);
    insert.bind(11, run.dtypesJson);
    if (group.empty())
        insert.bind(12);
    else
        insert.bind(12, group);
    if (!run.note.empty())
        insert.bind(13, run.note);
    insert.bind(14, int(run.archived));
    if (!run.derivedFrom.empty()) {
        insert.bind(15, run.derivedFrom.study);
        insert.bind(16, run.derivedFrom.runId);
        insert.bind(17, run.derivedFrom.runName);
    }
    if (run.validationSeed != study.studySeed())
        insert.bind(18, run.validationSeed);
    insert.exec();
    const int64_t id = db.getLastInsertRowid();
    executeEach(db, kInsertMetrics, id, source.metrics(run.id), bindMetrics);
    executeEach(db, kInsertValidation, id, source.validation(run.id), bindValidation);
    executeEach(db, kInsertMemory, id, source.memory(run.id), bindMemoryOf(0));
    const std::vector<RankRecord> ranks = source.ranks(run.id);
    executeEach(db, kInsertRank, id, ranks, bindRank);
    for (const RankRecord &rank : ranks)
        if (rank.rank > 0)
            executeEach(db, kInsertMemory, id, source.memory(run.id, rank.rank), bindMemoryOf(rank.rank));
    executeEach(db, kInsertEvent, id, source.events(run.id), bindEvent);
    executeEach(db, kInsertNumerics, id, source.numerics(run.id), bindNumerics);
    executeEach(db, kInsertTimeline, id, source.timelines(run.id), bindTimeline);
    executeEach(db, "INSERT INTO tags (run_id, tag) VALUES (?, ?)", id, run.tags, bindTag);
    executeEach(db, "INSERT INTO former_names (run_id, name, renamed_at) VALUES (?, ?, ?)", id, run.formerNames,
                [&](SQLite::Statement &s, const std::string &former) {
                    s.bind(2, former);
                    s.bind(3, run.finishedAt); // the source keeps no date for a name it had
                });
    return id;
}

void removeStudyFile(const std::string &path)
{
    std::filesystem::remove(path);
    for (const char *side : kSideFileSuffixes)
        std::filesystem::remove(path + side);
}

std::vector<int64_t> copyRunsInto(const Store &source, const std::vector<int64_t> &runIds,
                                  const std::string &destination, const std::string &suffix)
{
    const bool isNew = !std::filesystem::exists(destination);
    auto target = std::make_unique<Store>(destination, Store::Access::ReadWrite);
    try {
        if (isNew)
            target->setStudySeed(source.studySeed());
        return copyRunsFrom(*target, source, runIds, suffix);
    } catch (const StoreError &) {
        if (isNew) { // a refused copy leaves no new file behind
            target.reset();
            removeStudyFile(destination);
        }
        throw;
    }
}

Compaction vacuum(Store &study)
{
    SQLite::Database &db = database(study);
    Compaction out;
    out.bytesBefore = fileBytes(study.path()) + fileBytes(study.path() + "-wal");
    guarded(study.path(), "compact the file", [&] {
        db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
        db.exec("VACUUM");
        db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    });
    out.bytesAfter = fileBytes(study.path()) + fileBytes(study.path() + "-wal");
    return out;
}

} // namespace optlog
