// SPDX-License-Identifier: MIT
// The commands that curate a study: note, tag, rename, archive, delete, copy, vacuum.
#include "app/cli.h"
#include "app/commands.h"
#include "core/contract/format.h"
#include "core/contract/program.h"
#include "core/store/curation.h"
#include "core/store/store.h"

#include <filesystem>
#include <iostream>
#include <memory>

namespace optlog {

std::unique_ptr<Store> openExistingStudy(const std::string &path)
{
    if (!std::filesystem::exists(path))
        throw StoreError("study '" + path + "' does not exist; give the path of an existing study file (`"
                         + pasteableCommand({"optlog", "run", "--db", path}) + "` creates one)");
    return std::make_unique<Store>(path, Store::Access::ReadWrite);
}

std::vector<RunRecord> namedRuns(const Store &store, const std::vector<std::string> &names)
{
    std::vector<RunRecord> runs;
    for (const auto &name : names)
        runs.push_back(store.requireRunNamed(name));
    return runs;
}

namespace {

// Curation: each changes one study in one transaction, or nothing (exit 2, saying why).
struct CurateRequest
{
    std::string study;
    std::vector<std::string> runs; // names or ids
    std::string text;              // the note, or the new name
    std::vector<std::string> tags; // +add -remove (a bare word adds)
    bool clear = false;            // note: remove it
    bool undo = false;             // archive: bring back
    bool yes = false;              // delete: confirmed
};

struct CopyRequest
{
    std::string source;
    std::vector<std::string> runs;
    std::string destination; // created when missing, with the source's study seed
    std::string suffix;      // appended to each copied run's name
};

int noteCommand(const CurateRequest &request)
{
    return refuseBadInput("note", [&] {
        if (request.text.empty() && !request.clear)
            throw StoreError("the note is empty: give its text, or --clear to remove the run's note");
        if (!request.text.empty() && request.clear)
            throw StoreError("give a note's text or --clear, not both");
        const auto store = openExistingStudy(request.study);
        const RunRecord run = namedRuns(*store, request.runs).front();
        setNote(*store, run.id, request.text);
        std::cout << (request.clear ? "removed the note of run " : "noted run ") << run.id << " ("
                  << printable(run.name) << ")\n";
    });
}

int tagCommand(const CurateRequest &request)
{
    return refuseBadInput("tag", [&] {
        std::vector<std::string> add, remove;
        for (const auto &word : request.tags) {
            if (word.rfind("--", 0) == 0) // a mistyped option, not a tag to remove
                throw StoreError("'" + word + "' is not an option of optlog tag; remove a tag with -name");
            if (word.size() > 1 && word.front() == '-')
                remove.push_back(word.substr(1));
            else
                add.push_back(word.size() > 1 && word.front() == '+' ? word.substr(1) : word);
        }
        if (add.empty() && remove.empty())
            throw StoreError("no tags given: write +name to add a tag and -name to remove one");
        const auto store = openExistingStudy(request.study);
        const RunRecord run = namedRuns(*store, request.runs).front();
        changeTags(*store, run.id, add, remove);
        const RunRecord now = store->requireRun(run.id);
        std::string tags;
        for (const auto &tag : now.tags)
            tags += (tags.empty() ? "" : ", ") + tag;
        std::cout << "run " << run.id << " (" << printable(run.name) << ") tags: " << (tags.empty() ? "none" : tags)
                  << "\n";
    });
}

int renameCommand(const CurateRequest &request)
{
    return refuseBadInput("rename", [&] {
        const auto store = openExistingStudy(request.study);
        const RunRecord run = namedRuns(*store, request.runs).front();
        renameRun(*store, run.id, request.text);
        std::cout << "renamed run " << run.id << " from " << printable(run.name) << " to " << printable(request.text)
                  << " (the old name stays searchable)\n";
    });
}

int archiveCommand(const CurateRequest &request)
{
    return refuseBadInput("archive", [&] {
        const auto store = openExistingStudy(request.study);
        for (const RunRecord &run : namedRuns(*store, request.runs)) {
            setArchived(*store, run.id, !request.undo);
            std::cout << (request.undo ? "brought back run " : "archived run ") << run.id << " (" << printable(run.name)
                      << ")\n";
        }
    });
}

int deleteCommand(const CurateRequest &request)
{
    return refuseBadInput("delete", [&] {
        const auto store = openExistingStudy(request.study);
        const std::vector<RunRecord> runs = namedRuns(*store, request.runs);
        if (!request.yes) {
            std::string names;
            for (const auto &run : runs)
                names += (names.empty() ? "" : ", ") + std::to_string(run.id) + " (" + printable(run.name) + ")";
            throw StoreError("deleting removes run " + names
                             + " and all its rows for good; add --yes to delete, or `optlog archive` to hide instead");
        }
        for (const auto &run : runs) {
            deleteRun(*store, run.id);
            std::cout << "deleted run " << run.id << " (" << printable(run.name) << ")\n";
        }
        std::cout << "`" << pasteableCommand({"optlog", "vacuum", request.study})
                  << "` gives the freed pages back to the disk\n";
    });
}

int vacuumCommand(const std::string &study)
{
    return refuseBadInput("vacuum", [&] {
        const auto store = openExistingStudy(study);
        const Compaction compaction = vacuum(*store);
        std::cout << study << ": " << formatBytes(compaction.bytesBefore) << " -> "
                  << formatBytes(compaction.bytesAfter) << ", "
                  << formatBytes(std::max<int64_t>(0, compaction.bytesBefore - compaction.bytesAfter)) << " freed\n";
    });
}

int copyCommand(const CopyRequest &request)
{
    return refuseBadInput("copy", [&] {
        const Store source(request.source, Store::Access::ReadOnly);
        std::vector<int64_t> ids;
        for (const auto &run : namedRuns(source, request.runs))
            ids.push_back(run.id);
        const std::vector<int64_t> copied = copyRunsInto(source, ids, request.destination, request.suffix);
        const Store destination(request.destination, Store::Access::ReadOnly);
        for (size_t i = 0; i < copied.size(); ++i)
            std::cout << "copied run " << ids[i] << " of " << request.source << " as run " << copied[i] << " ("
                      << printable(destination.requireRun(copied[i]).name) << ") of " << request.destination << "\n";
        if (source.studySeed() != destination.studySeed())
            std::cout << "note: " << request.destination << " validates on the windows of study seed "
                      << destination.studySeed() << ", the copies on those of " << source.studySeed()
                      << "; comparisons name the difference\n";
    });
}

// The study and the one run of note, tag and rename.
CLI::App *addCuration(CLI::App &app, const char *name, const char *description, CurateRequest &request, std::string &run)
{
    CLI::App *command = app.add_subcommand(name, description);
    command->add_option("study", request.study, "study file")->required();
    command->add_option("run", run, "run name or id")->required();
    return command;
}

// The study and the runs of archive and delete.
CLI::App *addRunsCuration(CLI::App &app, const char *name, const char *description, CurateRequest &request)
{
    CLI::App *command = app.add_subcommand(name, description);
    command->add_option("study", request.study, "study file")->required();
    command->add_option("runs", request.runs, "run names or ids")->required();
    return command;
}

struct OneRun
{
    CurateRequest request;
    std::string run;
    const CurateRequest &named()
    {
        request.runs = {run};
        return request;
    }
};

} // namespace

Command addNoteCommand(CLI::App &app, const Invocation &)
{
    auto state = std::make_shared<OneRun>();
    CLI::App *command = addCuration(app, "note", "set a run's note (plain text, shown in lists, Compare and reports)",
                                    state->request, state->run);
    command->add_option("text", state->request.text, "the note (up to " + std::to_string(kMaxNoteBytes) + " bytes)");
    command->add_flag("--clear", state->request.clear, "remove the run's note");
    return {command, [state] { return noteCommand(state->named()); }};
}

Command addTagCommand(CLI::App &app, const Invocation &)
{
    auto state = std::make_shared<OneRun>();
    CLI::App *command = addCuration(app, "tag", "add (+name) and remove (-name) tags of a run", state->request,
                                    state->run);
    command->add_option("tags", state->request.tags, "+name adds, -name removes, a bare name adds");
    command->allow_extras(); // -name is a tag to remove, not an option
    return {command, [state, command] {
                for (const std::string &extra : command->remaining())
                    state->request.tags.push_back(extra);
                return tagCommand(state->named());
            }};
}

Command addRenameCommand(CLI::App &app, const Invocation &)
{
    auto state = std::make_shared<OneRun>();
    CLI::App *command = addCuration(app, "rename", "rename a run; the old name stays searchable", state->request,
                                    state->run);
    command->add_option("name", state->request.text, "the new name")->required();
    return {command, [state] { return renameCommand(state->named()); }};
}

Command addArchiveCommand(CLI::App &app, const Invocation &)
{
    auto request = std::make_shared<CurateRequest>();
    CLI::App *command = addRunsCuration(app, "archive", "hide runs from lists and comparisons without deleting them",
                                        *request);
    command->add_flag("--undo", request->undo, "bring archived runs back");
    return {command, [request] { return archiveCommand(*request); }};
}

Command addDeleteCommand(CLI::App &app, const Invocation &)
{
    auto request = std::make_shared<CurateRequest>();
    CLI::App *command = addRunsCuration(app, "delete", "delete runs and every row of them, for good", *request);
    command->add_flag("--yes", request->yes, "confirm: without it nothing is deleted");
    return {command, [request] { return deleteCommand(*request); }};
}

Command addCopyCommand(CLI::App &app, const Invocation &)
{
    auto request = std::make_shared<CopyRequest>();
    auto arguments = std::make_shared<std::vector<std::string>>();
    CLI::App *command = app.add_subcommand("copy", "copy finished runs with every row into another study (created "
                                                   "when missing); the source is not changed");
    command->add_option("SOURCE RUN... DESTINATION", *arguments, "source study, run names or ids, destination study")
        ->required()
        ->expected(3, -1);
    command->add_option("--suffix", request->suffix, "appended to each copied run's name, e.g. ' (gpu)'");
    return {command, [request, arguments] {
                request->source = arguments->front();
                request->destination = arguments->back();
                request->runs.assign(arguments->begin() + 1, arguments->end() - 1);
                return copyCommand(*request);
            }};
}

Command addVacuumCommand(CLI::App &app, const Invocation &)
{
    auto study = std::make_shared<std::string>();
    CLI::App *command = app.add_subcommand("vacuum", "compact a study file and report the bytes freed");
    command->add_option("study", *study, "study file")->required();
    return {command, [study] { return vacuumCommand(*study); }};
}

} // namespace optlog
