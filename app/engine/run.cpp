// SPDX-License-Identifier: MIT
// `optlog run` on this machine: one run of the engine, with the process's signals and exit code around it.
#include "app/cli.h"
#include "app/commands.h"
#include "app/engine/relaunch.h"
#include "app/enginework.h"
#include "app/launcher.h"
#include "core/analysis/runsummary.h"
#include "core/analysis/runtext.h"
#include "core/config/cachefile.h"
#include "core/config/config.h"
#include "core/config/configerror.h"
#include "core/config/configfields.h"
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

// One run of a request resolved once (resolveRun); `self` runs the replicates when there are several.
int runResolved(const RunRequest &request, const ResolvedRun &resolved, const std::string &self)
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

} // namespace

int runHere(RunRequest &run, const RunOptions &options, const Invocation &invocation)
{
    if (!options.resume.empty()) {
        if (!run.study.empty())
            return refuseBadInput("run", [] {
                throw ConfigError("--resume names the study itself (--resume STUDY RUN); leave out --db");
            });
        run.study = options.resume.at(0);
        run.resume = options.resume.at(1);
    }
    std::string launcher;
    if (const int refused = refuseBadInput("run", [&] { launcher = takeLauncherRank(run, options.ranks.has_value()); }))
        return refused;
    if (run.rank > 0) { // a joining rank takes everything from rank 0
        holdStopSignals();
        return runJoinedRank(run);
    }
    if (options.ranks)
        run.overrides.push_back("distributed.ranks=" + std::to_string(*options.ranks));
    if (run.configFile.empty() && run.preset.empty() && run.from.empty() && run.resume.empty())
        run.preset = "default";
    if (!options.budget.empty())
        run.overrides.push_back("memory.budget=\"" + options.budget + "\"");
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
    return runResolved(run, resolved, invocation.self);
}

} // namespace optlog
