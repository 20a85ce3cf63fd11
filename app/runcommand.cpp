// SPDX-License-Identifier: MIT
// `optlog run`: one run of the engine, with the process's signals and exit code around it.
#include "app/cli.h"
#include "app/commands.h"
#include "app/launcher.h"
#include "app/remote.h"
#include "core/analysis/analysis.h"
#include "core/config/cachefile.h"
#include "core/config/config.h"
#include "core/config/configerror.h"
#include "core/config/studyplan.h"
#include "core/engine/run/enginerun.h"
#include "core/engine/run/rankrun.h"
#include "core/engine/run/runrequest.h"
#include "core/engine/run/stopsignals.h"
#include "core/store/store.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include <unistd.h>

namespace optlog {

namespace {

bool setsName(const std::vector<std::string> &overrides)
{
    return std::any_of(overrides.begin(), overrides.end(), [](const std::string &assignment) {
        std::string key = assignment.substr(0, assignment.find('='));
        key.erase(0, key.find_first_not_of(' '));
        key.erase(key.find_last_not_of(' ') + 1);
        return key == "name";
    });
}

// Each replicate over seeds in its own engine process, one after another: the exit code of the
// first that did not complete, else 0. A cancelled replicate stops the rest.
int runReplicates(const RunRequest &request, const ResolvedRun &resolved, const std::string &self)
{
    std::vector<PlannedRun> replicates;
    if (const int refused = refuseBadInput("run", [&] {
            PlannedRun planned;
            planned.preset = request.preset;
            planned.configFile = request.configFile;
            planned.overrides = request.overrides;
            if (resolved.source) {
                planned.from = request.from;
                planned.fromToml = resolved.source->configToml;
            }
            planned.name = resolved.config.name;
            planned.repeats = request.repeats;
            replicates = replicatesOf(planned);
            Store(request.study); // a file that is not a study is refused before any replicate runs
        }))
        return refused;
    int result = kExitOk;
    for (const auto &replicate : replicates) {
        std::vector<std::string> arguments = runArguments(replicate, request.study);
        if (request.jsonLines)
            arguments.push_back("--jsonl");
        if (request.force)
            arguments.push_back("--force");
        const int code = runChild(self, arguments);
        if (result == kExitOk)
            result = code;
        if (code == kExitCancelled || code == kExitBadInput)
            break;
        if (stopRequested().load())
            return kExitCancelled; // a signal to this process alone stops the replicates after this one
    }
    return result;
}

// A rank other than 0 of a data-parallel run: it joins rank 0's rendezvous, trains with it and
// reports to it; it writes no study. Exits with its training's outcome.
int runJoinedRank(const RunRequest &request)
{
    watchStopSignals(); // as runCommand does: a signal held while starting is taken now
    Rendezvous rendezvous;
    if (const int refused = refuseBadInput("run", [&] { rendezvous = joinedRankRendezvous(request); }))
        return refused;
    try {
        // Waits for rank 0's store up to the default distributed.timeout (it has no config of its
        // own yet); the run's config, from rank 0, then sets the timeout of everything after.
        RankGroup ranks(rendezvous, std::chrono::seconds(RunConfig().distributed.timeout), &stopRequested());
        return exitCodeFor(runRank(ranks, stopRequested()));
    } catch (const RankStopped &e) {
        std::cerr << "optlog run: " << e.what() << "\n";
        return kExitCancelled;
    } catch (const std::exception &e) {
        std::cerr << "optlog run: rank " << request.rank << ": " << e.what() << "\n";
        return kExitFailed;
    }
}

// A run made `--from` another gets a name of its own unless --set name=... gives one: the source's
// name with the first free " v2", " v3", ... in the study it is run into.
void nameDerivedRun(ResolvedRun &resolved, const RunRequest &request)
{
    if (!resolved.source || setsName(request.overrides))
        return;
    std::vector<RunRecord> existing;
    if (std::filesystem::exists(request.study))
        existing = Store(request.study, Store::Access::ReadOnly).runs();
    applyOverride(resolved.config,
                  fieldAssignment(*findConfigField("name"), derivedRunName(resolved.source->origin.runName, existing)));
    validate(resolved.config);
}

// Under a launcher (srun --ntasks N, torchrun) every task runs the same command line: the rank,
// world size and rendezvous come from its environment, unless --rendezvous or --rank says. Rank 0
// trains into the study (and does not start ranks of its own); the others join it and take the
// run from it, so the config options their command line also has are theirs to leave.
// Returns the launcher's name, empty when there is none.
std::string takeLauncherRank(RunRequest &run, bool ranksGiven)
{
    if (!run.rendezvous.empty() || run.rank >= 0 || run.worldSize > 0)
        return "";
    const std::optional<LauncherRank> given = launcherRank(std::getenv);
    if (!given)
        return "";
    run.rendezvous = given->rendezvous;
    run.rank = given->rank;
    run.worldSize = given->worldSize;
    if (run.rank > 0) {
        RunRequest joining;
        joining.rendezvous = run.rendezvous;
        joining.rank = run.rank;
        joining.worldSize = run.worldSize;
        run = joining;
        return given->launcher;
    }
    if (!ranksGiven)
        run.overrides.push_back("distributed.ranks=" + std::to_string(given->worldSize));
    return given->launcher;
}

// MFU never above 100%: a run whose own rate beat the matmul peak it was judged against measures
// the peak again (once), and is judged against the new one (docs/measurement.md).
void judgeAgainstAPeakItDidNotBeat(EngineRun &run, int64_t runId, const std::string &studyPath)
{
    try {
        const Store study(studyPath, Store::Access::ReadOnly);
        const RunSummary summary = summarize(study, study.requireRun(runId));
        if (!summary.peakBeatenByRun)
            return;
        std::cerr << "optlog run: the run reached " << summary.achievedGflops
                  << " GFLOP/s, above the matmul peak it was judged against; measuring the peak again\n";
        run.remeasurePeak(runId, summary.achievedGflops / double(run.config().distributed.ranks));
    } catch (const std::exception &e) {
        std::cerr << "optlog run: the matmul peak was not measured again: " << e.what() << "\n";
    }
}

} // namespace

int runCommand(const RunRequest &request, const ResolvedRun &resolved, const std::string &self)
{
    // A signal during start-up (loading data, measuring the machine) cancels with nothing written;
    // during training it ends the run as cancelled, with what it recorded. One that came while
    // holdStopSignals() held it is taken now.
    watchStopSignals();
    if (request.repeats != 1)
        return runReplicates(request, resolved, self);
    // Past a file-size limit (ulimit -f) a write then fails as an I/O error the run reports,
    // instead of the signal's default: killing the process mid-write.
    std::signal(SIGXFSZ, SIG_IGN);
    std::unique_ptr<EngineRun> run;
    std::optional<Rendezvous> rendezvous;
    if (const int refused = refuseBadInput("run", [&] {
            run = engineRunFor(resolved, request.force);
            rendezvous = rankZeroRendezvous(request, run->config());
            run->open(request.study);
        }))
        return refused;
    // Data parallel: rank 0 serves the rendezvous, starts the other ranks on this machine unless
    // they join from others, and trains with them.
    LocalRanks localRanks;
    if (rendezvous) {
        try {
            auto ranks = std::make_shared<RankGroup>(*rendezvous,
                                                     std::chrono::seconds(run->config().distributed.timeout));
            if (request.rendezvous.empty()) {
                localRanks.start(self, ranks->port(), rendezvous->worldSize, run->config().runtime.device == "cuda");
                ranks->setLostRankProbe([&localRanks] { return localRanks.lost(); });
            }
            run->trainWithRanks(ranks);
        } catch (const std::exception &e) {
            std::cerr << "optlog run: " << e.what() << "; the run was not created\n";
            return kExitFailed;
        }
    }
    if (stopRequested().load()) {
        std::cerr << "optlog run: cancelled while starting, before the run was created in " << request.study << "\n";
        return kExitCancelled;
    }
    EngineRun::Result result;
    try {
        result = run->train({request.jsonLines, bool(isatty(STDERR_FILENO))}, stopRequested());
    } catch (const StoreError &e) {
        std::cerr << "optlog run: " << e.what() << "; the run could not be created\n";
        return kExitFailed;
    }
    localRanks.finish(std::chrono::seconds(run->config().distributed.timeout));
    const TrainingOutcome &outcome = result.outcome;
    judgeAgainstAPeakItDidNotBeat(*run, result.runId, request.study);
    std::cerr << "optlog run: run " << result.runId << " (" << run->config().name << ") "
              << outcomeName(outcome.outcome) << (outcome.message.empty() ? "" : ": " + outcome.message) << " -> "
              << request.study << "\n";
    return exitCodeFor(outcome.outcome);
}

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
                if (!extra->resume.empty()) {
                    if (!run.study.empty())
                        return refuseBadInput("run", [] {
                            throw ConfigError("--resume names the study itself (--resume STUDY RUN); leave out --db");
                        });
                    run.study = extra->resume.at(0);
                    run.resume = extra->resume.at(1);
                }
                std::string launcher;
                if (const int refused = refuseBadInput("run",
                                                       [&] { launcher = takeLauncherRank(run, ranks->count() > 0); }))
                    return refused;
                if (run.rank > 0) { // a joining rank takes everything from rank 0
                    holdStopSignals();
                    return runJoinedRank(run);
                }
                if (ranks->count())
                    run.overrides.push_back("distributed.ranks=" + std::to_string(extra->ranks));
                if (run.configFile.empty() && run.preset.empty() && run.from.empty() && run.resume.empty())
                    run.preset = "default";
                if (!extra->budget.empty())
                    run.overrides.push_back("memory.budget=\"" + extra->budget + "\"");
                if (run.study.empty())
                    run.study = studyFilePath("study.sqlite");
                holdStopSignals();
                // The request resolved once: every step after reads `resolved`.
                ResolvedRun resolved;
                if (const int refused = refuseBadInput("run", [&] {
                        resolved = resolveRun(run);
                        nameDerivedRun(resolved, run);
                    }))
                    return refused;
                relaunchWithRuntimeVariables(invocation.argv, resolved.config.precision.mode);
                if (!launcher.empty())
                    std::cerr << "optlog run: rank 0 of " << run.worldSize << " (from " << launcher
                              << "), serving the rendezvous at " << run.rendezvous << "\n";
                return runCommand(run, resolved, invocation.self);
            }};
}

} // namespace optlog
