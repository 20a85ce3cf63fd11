// SPDX-License-Identifier: MIT
#pragma once
// The commands of `optlog` as main() registers them, and what several commands share. A command's
// own request and work are its file's; a request that two files share has a header of its own
// (app/studycommand.h, app/readcommands.h), and the engine's work takes its requests from
// app/enginework.h.

#include "app/cli.h"
#include "core/store/store.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace optlog {

// Runs `prepare`, which reads the command's input; when it refuses it (a config, data or study file
// error), says why as "optlog <command>: ..." and returns kExitBadInput, else 0.
int refuseBadInput(const char *command, const std::function<void()> &prepare);

// Each command of `optlog`, registered on `app` with its options and the callback that runs it
// (app/cli.h), in the file that implements it.
Command addRunCommand(CLI::App &app, const Invocation &invocation);
Command addStudyCommand(CLI::App &app, const Invocation &invocation);
Command addCompareCommand(CLI::App &app, const Invocation &invocation);
Command addEstimateCommand(CLI::App &app, const Invocation &invocation);
Command addFitCommand(CLI::App &app, const Invocation &invocation);
Command addTuneCommand(CLI::App &app, const Invocation &invocation);
Command addReportCommand(CLI::App &app, const Invocation &invocation);
Command addRunsCommand(CLI::App &app, const Invocation &invocation);
Command addNoteCommand(CLI::App &app, const Invocation &invocation);
Command addTagCommand(CLI::App &app, const Invocation &invocation);
Command addRenameCommand(CLI::App &app, const Invocation &invocation);
Command addArchiveCommand(CLI::App &app, const Invocation &invocation);
Command addDeleteCommand(CLI::App &app, const Invocation &invocation);
Command addCopyCommand(CLI::App &app, const Invocation &invocation);
Command addVacuumCommand(CLI::App &app, const Invocation &invocation);
Command addQuantizeCommand(CLI::App &app, const Invocation &invocation);
Command addPruneCommand(CLI::App &app, const Invocation &invocation);
Command addShowCommand(CLI::App &app, const Invocation &invocation);
Command addExportCommand(CLI::App &app, const Invocation &invocation);
Command addRecordCommand(CLI::App &app, const Invocation &invocation);
// Runs on a cluster (app/clustercommands.cpp, docs/cluster.md).
Command addGatherCommand(CLI::App &app, const Invocation &invocation);
Command addCancelCommand(CLI::App &app, const Invocation &invocation);
// Runs on another machine over SSH (app/hostcommands.cpp, app/remotecommands.cpp, docs/remote.md).
Command addHostCommand(CLI::App &app, const Invocation &invocation);
Command addFollowCommand(CLI::App &app, const Invocation &invocation);

// What this build's reports can be, for `--version`: with charts where it was built with Qt.
std::string reportAbility();

// The study, for writing, or a StoreError: curation and the weights commands change a study that
// exists, never make one.
std::unique_ptr<Store> openExistingStudy(const std::string &path);
// The runs a command names (ids or names: the newest of that name), all found, or a StoreError
// naming the first that is not.
std::vector<RunRecord> namedRuns(const Store &store, const std::vector<std::string> &names);

} // namespace optlog
