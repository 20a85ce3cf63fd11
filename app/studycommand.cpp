// SPDX-License-Identifier: MIT
// `optlog study`: every run of a study plan the study has not completed, each in its own engine
// process, then the comparison.
#include "app/cli.h"
#include "app/commands.h"
#include "app/launcher.h"
#include "core/analysis/analysis.h"
#include "core/config/cachefile.h"
#include "core/config/configerror.h"
#include "core/config/studyplan.h"
#include "core/engine/model/scriptedmodel.h"
#include "core/store/store.h"

#include <algorithm>
#include <iostream>

namespace optlog {

namespace {

// Drops from `plan` the runs its model cannot take (NotApplicable: chunked attention or
// checkpointing for a TorchScript module without blocks, say), telling why, so that the study
// trains and compares the rest. A module is loaded and checked against its contract here, once
// per run, so that a broken one is refused before anything trains. Any other mistake is thrown,
// and so is a skipped baseline: there would be nothing to compare against.
void skipInapplicableRuns(StudyPlan &plan)
{
    std::vector<PlannedRun> kept;
    std::vector<std::string> skipped;
    for (auto &run : plan.runs) {
        try {
            const RunConfig config = run.config();
            if (config.model.source == "torchscript") {
                const ScriptedModel checked(config); // loads it and runs the contract's forwards
            }
            kept.push_back(std::move(run));
        } catch (const NotApplicable &e) {
            if (run.name == plan.baseline)
                throw NotApplicable(e.field(), "the baseline run '" + run.name + "' cannot apply to this model, so "
                                                   + "the study has nothing to compare against: " + e.what());
            std::cerr << "optlog study: skipped " << run.name << ": " << e.what() << "\n";
            skipped.push_back(run.name);
        }
    }
    for (auto &run : kept)
        if (std::find(skipped.begin(), skipped.end(), run.baseline) != skipped.end()) {
            std::cerr << "optlog study: " << run.name << " is compared against " << plan.baseline << ", since its own "
                      << "baseline " << run.baseline << " was skipped\n";
            run.baseline.clear();
        }
    plan.runs = std::move(kept);
}

} // namespace

int studyCommand(const StudyRequest &request, const std::string &self)
{
    StudyPlan plan;
    std::vector<PlannedRun> replicates, todo; // the plan's runs, each as its replicates over seeds
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
            skipInapplicableRuns(plan);
            // Validates every run's config, with the overrides, and its seeds before anything runs.
            for (const auto &run : plan.runs)
                for (auto &replicate : replicatesOf(run))
                    replicates.push_back(std::move(replicate));
            studyFile = request.study.empty() ? studyFilePath(plan.name + ".sqlite") : request.study;
            if (!request.scheduler.empty() && request.scheduler != "slurm")
                throw ConfigError("--scheduler " + request.scheduler
                                  + " is not one optlog submits to; the one it knows is slurm");
            if (request.scheduler.empty())
                todo = runsToDo(replicates, Store(studyFile).runs());
        }))
        return refused;
    if (!request.scheduler.empty())
        return clusterStudyCommand(request, plan, replicates, studyFile, self);

    for (size_t i = 0; i < replicates.size(); ++i) {
        const PlannedRun &run = replicates[i];
        const bool needed = std::any_of(todo.begin(), todo.end(),
                                        [&run](const PlannedRun &t) { return t.name == run.name; });
        if (!needed) {
            std::cerr << "optlog study: " << run.name << " already completed in " << studyFile << ", kept\n";
            continue;
        }
        std::cerr << "optlog study: run " << (i + 1) << "/" << replicates.size() << ": " << run.name << "\n";
        std::vector<std::string> arguments = runArguments(run, studyFile);
        if (request.force)
            arguments.push_back("--force");
        const int code = runChild(self, arguments);
        if (code == kExitCancelled || code == kExitBadInput) {
            std::cerr << "optlog study: stopped at " << run.name << "\n";
            return code;
        }
    }

    return comparePlannedStudy(plan, studyFile, request.wide);
}

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
    command->add_flag("--wait", request->wait,
                      "with --scheduler: wait for the tasks, gathering each run as it ends, then compare");
    return {command, [request, repeats, repeatsOption, invocation] {
                if (repeatsOption->count())
                    request->repeats = *repeats;
                return studyCommand(*request, invocation.self);
            }};
}

} // namespace optlog
