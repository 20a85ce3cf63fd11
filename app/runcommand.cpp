// SPDX-License-Identifier: MIT
// `optlog run`: its options, and a run sent to another machine; one trained here is the engine's
// (app/engine/run.cpp).
#include "app/cli.h"
#include "app/commands.h"
#include "app/enginework.h"
#include "app/remote.h"
#include "core/config/cachefile.h"
#include "core/config/studyplan.h"

#include <memory>
#include <string>
#include <vector>

namespace optlog {

Command addRunCommand(CLI::App &app, const Invocation &invocation)
{
    auto request = std::make_shared<RunRequest>();
    struct Extra
    {
        std::string budget;
        std::vector<std::string> resume;
        int64_t ranks = 0;
        std::string host;
    };
    auto extra = std::make_shared<Extra>();
    CLI::App *command = app.add_subcommand("run", "train one run into a study file");
    addConfigOptions(command, request->preset, request->configFile, request->overrides);
    command->add_option("--db", request->study,
                        "study file (created when missing); default study.sqlite in "
                        "$XDG_DATA_HOME/optlog (~/.local/share/optlog)");
    command->add_flag("--jsonl", request->jsonLines, "print one JSON event per line on stdout");
    command->add_option("--repeats", request->repeats,
                        "train the run this many times over seeds train.seed, +1, ... "
                        "(1 to "
                            + std::to_string(PlannedRun::kMaxRepeats) + "), one group");
    command->add_option("--memory-budget", extra->budget,
                        "refuse allocations past this size, e.g. 512MiB; "
                        "the run ends as oom (same as --set memory.budget=...)");
    command->add_flag("--force", request->force,
                      "train even when the memory model predicts the run will not fit "
                      "its budget or the machine's available memory");
    command->add_option("--from", request->from,
                        "start from a stored run's config, STUDY:RUN (name or id), and "
                        "change fields with --set; the new run links to it");
    command
        ->add_option("--resume", extra->resume,
                     "continue a cancelled or crashed run, STUDY RUN (name or id), "
                     "from its last checkpoint, with its own config")
        ->expected(2);
    CLI::Option *ranks = command->add_option("--ranks", extra->ranks,
                                             "train data-parallel over this many engine "
                                             "processes on this machine (same as --set "
                                             "distributed.ranks=N)");
    command->add_option("--rendezvous", request->rendezvous,
                        "data parallel over machines: HOST:PORT where rank 0 "
                        "serves the rendezvous (with --rank and --world-size)");
    command
        ->add_option("--rank", request->rank,
                     "this process's rank: 0 trains into the study, 1 and above join "
                     "rank 0 and take its config")
        ->check(CLI::Range(int64_t(0), int64_t(63)));
    command->add_option("--world-size", request->worldSize, "the ranks of the run (equal to distributed.ranks)")
        ->check(CLI::Range(int64_t(2), int64_t(64)));
    command->add_option("--host", extra->host,
                        "train on another machine over SSH (an alias from ~/.ssh/config, user@host), "
                        "following its rows into the study here (docs/remote.md)");

    return {command, [request, extra, ranks, invocation] {
                RunRequest &run = *request;
                if (!extra->host.empty()) {
                    if (run.configFile.empty() && run.preset.empty())
                        run.preset = "default";
                    if (!extra->budget.empty())
                        run.overrides.push_back("memory.budget=\"" + extra->budget + "\"");
                    if (run.study.empty())
                        run.study = studyFilePath("study.sqlite");
                    return runOnHost(run, extra->host);
                }
                // A run that trained on another machine is resumed there, and followed here
                // (--memory-budget and --ranks beside it are refused as for any resume, below).
                if (extra->resume.size() == 2 && run.study.empty() && extra->budget.empty() && !ranks->count()
                    && trainsElsewhere(extra->resume[0], extra->resume[1]))
                    return resumeOnHost(run, extra->resume[0], extra->resume[1]);
                RunOptions options{extra->budget, extra->resume, std::nullopt};
                if (ranks->count())
                    options.ranks = extra->ranks;
                return runHere(run, options, invocation);
            }};
}

} // namespace optlog
