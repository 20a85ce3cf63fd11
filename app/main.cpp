// SPDX-License-Identifier: MIT
// `optlog` and `optlog-engine`: run training experiments into a study file and read them back. Each
// command registers its own options and callback; this file only assembles them and draws the
// boundary. What differs between the two binaries is behind app/enginework.h.
#include "app/cli.h"
#include "app/commands.h"
#include "app/enginework.h"
#include "app/launcher.h"
#include "app/manpage.h"
#include "core/contract/inputerror.h"
#include "core/contract/outcome.h"
#include "optlog_version.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>

namespace {

// An exception nobody catches (in a worker thread, through a noexcept function) ends the process
// with a message and exit code 1 instead of abort()'s core dump and 134.
[[noreturn]] void terminateWithMessage()
{
    std::string what = "an exception escaped where it could not be handled";
    if (const std::exception_ptr current = std::current_exception()) {
        try {
            std::rethrow_exception(current);
        } catch (const std::exception &e) {
            what = e.what();
        } catch (...) {
        }
    }
    std::fprintf(stderr, "optlog: failed: %s\n", what.c_str());
    std::_Exit(optlog::kExitFailed);
}

// What `--version` prints: the build, then what this build can do that the other cannot (the
// product paths, charts in reports: docs/building.md). The tests read it too.
std::string versionLine()
{
    return optlog::buildLine() + "; " + optlog::reportAbility();
}

} // namespace

int main(int argc, char **argv)
{
    using namespace optlog;
    handToEngine(argv);
    CLI::App app{"optlog: the optimization log of training a small transformer language model.\nExit codes: "
                 + exitCodesText() + "."};
    app.require_subcommand(1);
    app.set_version_flag("--version", versionLine());

    // In the order --help and the manual list them.
    const Invocation invocation{argc, argv, selfPath(argv[0])};
    std::vector<Command> commands;
    for (const auto add :
         {addRunCommand,      addStudyCommand,   addCompareCommand, addEstimateCommand, addFitCommand,
          addTuneCommand,     addReportCommand,  addRunsCommand,    addNoteCommand,     addTagCommand,
          addRenameCommand,   addArchiveCommand, addDeleteCommand,  addCopyCommand,     addVacuumCommand,
          addQuantizeCommand, addPruneCommand,   addShowCommand,    addExportCommand,   addRecordCommand,
          addHostCommand,     addFollowCommand,  addGatherCommand,  addCancelCommand})
        commands.push_back(add(app, invocation));
    refuseEmptyValues(app);

    // Internal, for the build: the manual page written from the definitions above.
    if (argc == 3 && std::string(argv[1]) == "--man-page") {
        std::cout << manPage(app, std::string(OPTLOG_VERSION) + " (" + OPTLOG_GIT_DESCRIBE + ")", argv[2]);
        return kExitOk;
    }
    // CLI11 would only say that a command is required; say which word it did not know.
    if (argc > 1 && argv[1][0] != '-') {
        std::string names;
        bool known = false;
        for (const Command &command : commands) {
            known = known || command.options->get_name() == argv[1];
            names += (names.empty() ? "" : ", ") + command.options->get_name();
        }
        if (!known) {
            std::cerr << "optlog: unknown command '" << argv[1] << "'; the commands are " << names << "\n";
            return kExitBadInput;
        }
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        const int code = app.exit(e);
        return code == 0 ? kExitOk : kExitBadInput;
    }

    // The boundary: whatever a command did not handle still ends with a documented exit code and a
    // message, never an abort.
    const std::string name = "optlog " + app.get_subcommands().front()->get_name();
    std::set_terminate(terminateWithMessage);
    try {
        for (const Command &command : commands)
            if (*command.options)
                return command.run();
        return kExitBadInput;
    } catch (const InputError &e) {
        std::cerr << name << ": " << e.what() << "\n";
        return kExitBadInput;
    } catch (const std::bad_alloc &) {
        std::cerr << name
                  << ": out of memory (std::bad_alloc) before the run could record it; `optlog estimate` "
                     "predicts what the config needs\n";
        return kExitFailed;
    } catch (const std::exception &e) {
        std::cerr << name << ": failed: " << e.what() << "\n";
        return kExitFailed;
    }
}
