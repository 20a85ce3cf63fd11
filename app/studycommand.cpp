// SPDX-License-Identifier: MIT
// `optlog study`: every run of a study plan the study has not completed, each in its own engine
// process, then the comparison.
#include "app/studycommand.h"

#include "app/cli.h"
#include "app/commands.h"
#include "app/enginework.h"
#include "app/launcher.h"
#include "app/readcommands.h"
#include "app/remote.h"
#include "core/analysis/planruns.h"
#include "core/config/cachefile.h"
#include "core/config/configerror.h"
#include "core/config/studyplan.h"
#include "core/store/remoteruns.h"
#include "core/store/store.h"

#include <algorithm>
#include <filesystem>
#include <iostream>

namespace optlog {

namespace {

// What planRuns left out and changed, said before anything trains.
void sayWhatWasSkipped(const PlanRuns &runs)
{
    for (const auto &skipped : runs.skipped)
        std::cerr << "optlog study: skipped " << skipped.name << ": " << skipped.reason << "\n";
    for (const auto &note : runs.notes)
        std::cerr << "optlog study: " << note << "\n";
}

// The runs `studyFile` holds, read without writing: a plan refused after this leaves no file behind.
// A file that is not a study is refused here, before anything runs.
std::vector<RunRecord> storedRuns(const std::string &studyFile)
{
    if (!std::filesystem::exists(studyFile))
        return {};
    return Store(studyFile, Store::Access::ReadOnly).runs();
}

int studyCommand(const StudyRequest &request, const std::string &self)
{
    StudyPlan plan;
    PlanRuns runs;
    std::string studyFile;
    if (const int refused = refuseBadInput("study", [&] {
            plan = loadStudyPlan(request.plan);
            for (auto &run : plan.runs) {
                run.overrides.insert(run.overrides.end(), request.overrides.begin(), request.overrides.end());
                if (request.repeats) {
                    run.repeats = *request.repeats;
                    run.seeds.clear(); // --repeats replaces the plan's own seeds
                }
            }
            studyFile = request.study.empty() ? studyFilePath(plan.name + ".sqlite") : request.study;
            if (!request.scheduler.empty() && request.scheduler != "slurm")
                throw ConfigError("--scheduler " + request.scheduler
                                  + " is not one optlog submits to; the one it knows is slurm");
            if (!request.scheduler.empty() && !request.host.empty())
                throw ConfigError("--scheduler and --host are two places to train: give one");
            // On Slurm, what the study holds is known once the shards are gathered (clustercommands.cpp).
            runs = planRuns(plan, request.scheduler.empty() ? storedRuns(studyFile) : std::vector<RunRecord>{},
                            requireModelTakes);
        }))
        return refused;
    if (request.scheduler.empty() && request.host.empty())
        if (const int refused = refuseWithoutEngine("study"))
            return refused;
    sayWhatWasSkipped(runs);
    if (!request.scheduler.empty())
        return clusterStudyCommand(request, runs.plan, studyFile, self);
    if (!request.host.empty()) {
        // A run an earlier `study --host` left training there is followed to its end first: then
        // the plan's runs still to do are known, and the host trains one run at a time.
        std::vector<RemoteRun> unfinished;
        if (std::filesystem::exists(studyFile))
            if (const int refused = refuseBadInput("study", [&] {
                    const Store study(studyFile, Store::Access::ReadOnly);
                    requireStoredPlaces(study);
                    unfinished = unfinishedRemoteRuns(study, {});
                }))
                return refused;
        if (!unfinished.empty()) {
            std::cerr << "optlog study: following the run" << (unfinished.size() == 1 ? "" : "s")
                      << " still training on other machines first\n";
            if (followRuns(studyFile, unfinished, false) == kExitBadInput)
                return kExitBadInput;
            runs = planRuns(plan, storedRuns(studyFile), requireModelTakes);
        }
    }

    for (size_t i = 0; i < runs.replicates.size(); ++i) {
        const PlannedRun &run = runs.replicates[i];
        const bool needed = std::any_of(runs.todo.begin(), runs.todo.end(),
                                        [&run](const PlannedRun &t) { return t.name == run.name; });
        if (!needed) {
            std::cerr << "optlog study: " << run.name << " already completed in " << studyFile << ", kept\n";
            continue;
        }
        std::cerr << "optlog study: run " << (i + 1) << "/" << runs.replicates.size() << ": " << run.name << "\n";
        std::vector<std::string> arguments = runArguments(run, studyFile);
        if (request.force)
            arguments.push_back("--force");
        if (!request.host.empty()) // trains there, detached, followed here (docs/remote.md)
            arguments.insert(arguments.end(), {"--host", request.host});
        const int code = runChild(self, arguments);
        if (code == kExitCancelled || code == kExitBadInput) {
            std::cerr << "optlog study: stopped at " << run.name << "\n";
            return code;
        }
    }

    return comparePlannedStudy(runs.plan, studyFile, request.wide);
}

} // namespace

int comparePlannedStudy(const StudyPlan &plan, const std::string &studyFile, bool wide)
{
    CompareRequest compare;
    compare.study = studyFile;
    compare.comparison.baseline = plan.baseline;
    compare.comparison.tolerance = plan.tolerance;
    compare.wide = wide;
    for (const auto &run : plan.runs) {
        compare.comparison.runs.push_back(run.name);
        if (!run.baseline.empty())
            compare.comparison.baselineOf[run.name] = run.baseline;
    }
    return compareCommand(compare);
}

Command addStudyCommand(CLI::App &app, const Invocation &invocation)
{
    auto request = std::make_shared<StudyRequest>();
    auto repeats = std::make_shared<int64_t>(1);
    CLI::App *command = app.add_subcommand("study", "run every run of a study plan (each in its own engine process) "
                                                    "and print the comparison");
    command->add_option("plan", request->plan, "built-in study name or study TOML file")->capture_default_str();
    command->add_option("--db", request->study,
                        "study file; default <plan name>.sqlite in $XDG_DATA_HOME/optlog "
                        "(~/.local/share/optlog)");
    command->add_option("--set", request->overrides, "override a field in every run (repeatable)");
    CLI::Option *repeatsOption = command->add_option("--repeats", *repeats,
                                                     "train every run this many times over seeds (1 to "
                                                         + std::to_string(PlannedRun::kMaxRepeats)
                                                         + "); default as the plan says");
    command->add_flag("--force", request->force, "train runs predicted not to fit their budget or the machine");
    command->add_flag("--wide", request->wide, kWideHelp);
    command->add_option("--scheduler", request->scheduler,
                        "hand the runs to a cluster scheduler instead of training them here: slurm (one job array, "
                        "a task per run, each into a shard that `optlog gather` collects)");
    command->add_option("--partition", request->submit.partition, "with --scheduler: the Slurm partition");
    command->add_option("--max-parallel", request->submit.maxParallel, "with --scheduler: tasks running at once")
        ->check(CLI::Range(int64_t(1), int64_t(10000)));
    command->add_option("--time", request->submit.timeLimit, "with --scheduler: each task's time limit, HH:MM:SS");
    command->add_option("--sbatch-arg", request->submit.extra,
                        "with --scheduler: an argument for sbatch as it is, e.g. --sbatch-arg=--mem=8G (repeatable)");
    command->add_option("--host", request->host,
                        "train the runs on another machine over SSH, one after another there, each followed into "
                        "the study here (docs/remote.md)");
    command->add_flag("--wait", request->wait,
                      "with --scheduler: wait for the tasks, gathering each run as it ends, then compare");
    return {command, [request, repeats, repeatsOption, invocation] {
                if (repeatsOption->count())
                    request->repeats = *repeats;
                return studyCommand(*request, invocation.self);
            }};
}

} // namespace optlog
