// SPDX-License-Identifier: MIT
// `optlog tune`: measures, per precision family, which intra-op thread count, OpenMP wait policy
// and OpenBLAS core type train fastest on this machine, then which path of the products at those
// (productpaths.h), alternating the candidates in short runs, and caches the winner for the
// launcher. A core type is tried only when OpenBLAS fell back to its generic kernels, the CPU's
// flags support better ones, the user or system has not set OPENBLAS_CORETYPE, and a GEMM with
// that core type matches a reference result.
#include "app/cli.h"
#include "app/commands.h"
#include "app/enginework.h"
#include "app/launcher.h"
#include "core/analysis/runsummary.h"
#include "core/config/tuning.h"
#include "core/contract/format.h"
#include "core/contract/machineload.h"
#include "core/contract/privatefolder.h"
#include "core/engine/kernels/gemm.h"
#include "core/engine/machine/calibration.h"
#include "core/engine/machine/device.h"
#include "core/engine/machine/environment.h"
#include "core/engine/precision/precision.h"
#include "core/store/store.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>

namespace optlog {

int gemmCheckCommand()
{
    const GemmCheck check = checkGemm();
    std::printf("gemm check with core %s: largest error %.3g\n", blasCoreName().c_str(), check.largestError);
    return check.correct ? kExitOk : kExitFailed;
}

// One line per precision family: how this machine is tuned for it, for people and the workbench.
int tuneStatus(const std::string &cache, const std::string &key)
{
    for (const char *family : {"fp32", "bf16"}) {
        const std::optional<TunedSettings> tuned = readTuning(cache, key, family);
        if (!tuned) {
            std::printf("%s: not tuned on this machine\n", family);
            continue;
        }
        const TuneCandidate settings{tuned->threads, tuned->waitPolicy, tuned->coreType, tuned->productPath, {}};
        // The chosen path with what it reached here; every path's timing is in the cache file.
        std::string reached;
        for (const PathTiming &timing : tuned->paths)
            if (timing.path == tuned->productPath && !timing.reached.empty())
                reached = " (" + timing.reached + ")";
        std::printf("%s: tuned by %s: %s%s\n", family, tuned->measuredBy.c_str(), settings.label().c_str(),
                    reached.c_str());
    }
    return kExitOk;
}

int peakCommand(const TuneRequest &request)
{
    RunConfig config;
    config.runtime.device = request.peakDevice;
    if (const int refused = refuseBadInput("tune", [&] {
            runDevice(config);
            busyShareAllowed();
        }))
        return refused;
    config.runtime.threads = request.peakThreads; // 0: the tuned or default threads, as a run takes
    const int threads = applyThreadSettings(config.runtime).intraOp;
    const MatmulPeak peak = matmulPeak(config, threads);
    std::printf("optlog tune: the matmul peak on %s at %d threads, %s:\n", request.peakDevice.c_str(), threads,
                peak.fromCache ? "from the cache" : formatted("measured in %.0f s", peak.seconds).c_str());
    const std::pair<const char *, double> dtypes[] = {{"float32", peak.float32Gflops},
                                                      {"bfloat16", peak.bfloat16Gflops},
                                                      {"float16", peak.float16Gflops},
                                                      {"tfloat32", peak.tfloat32Gflops}};
    for (const auto &[dtype, gflops] : dtypes) {
        if (gflops <= 0)
            continue;
        std::string paths;
        if (const auto rates = peak.pathGflops.find(dtype); rates != peak.pathGflops.end())
            for (const auto &[path, rate] : rates->second)
                paths += (paths.empty() ? " (" : ", ") + path + formatted(" %.0f", rate);
        std::printf("  %-8s %8.0f GFLOP/s%s\n", dtype, gflops, paths.empty() ? "" : (paths + ")").c_str());
    }
    if (!peak.busy.empty()) {
        std::printf("The machine was busy (%s) in each of %d attempts: this peak is not kept. Measure it again "
                    "when the machine is quiet.\n",
                    peak.busy.c_str(), kPeakAttempts);
        return kExitOk;
    }
    std::printf("Runs your own trainer records on this machine at %d threads%s get their MFU against it.\n", threads,
                config.runtime.device == "cpu" ? " with these variables (OMP_WAIT_POLICY)" : "");
    return kExitOk;
}

namespace {

// What a run's products reached, as it recorded it ("oneDNN 2.6.3, brg:avx512_core_bf16").
std::string productPathReached(const std::string &environmentJson)
{
    const nlohmann::json environment = nlohmann::json::parse(environmentJson, nullptr, false);
    if (!environment.is_object() || !environment.contains("product_path"))
        return "";
    return environment["product_path"].value("reached", std::string());
}

// A candidate's run that found the machine busy runs once more; a second busy one ends the tuning
// of its precision, which keeps nothing (the candidates' order is what a neighbour distorts).
constexpr int kCandidateAttempts = 2;

// The short runs `optlog tune` times candidates with, one study for all of them.
struct CandidateRuns
{
    std::string self;
    const TuneRequest &request;
    std::string study;
    int runNumber = 0;
    // Not empty once a candidate's run and its retry both found the machine busy
    // (MachineLoad::describe()): what the candidates would show is someone else's load.
    std::string busy;

    // Times each candidate in `mode`, `request.rounds` times alternated, so a machine's drift falls
    // on all of them alike; with `reached`, what each candidate's products reached, as its first
    // run recorded it. False where a run fails (said here) or the machine stays busy (`busy`): the
    // rest would be timed for nothing, since a busy tuning is not kept.
    bool time(const std::string &mode, std::vector<TuneCandidate> &candidates,
              std::vector<std::string> *reached = nullptr)
    {
        for (int round = 0; round < request.rounds; ++round) {
            for (auto &candidate : candidates) {
                std::optional<RunSummary> summary = timed(mode, candidate);
                if (!summary)
                    return false;
                candidate.tokensPerSecond.push_back(summary->throughput.median);
                if (reached && round == 0)
                    reached->push_back(productPathReached(summary->run.environmentJson));
            }
        }
        return true;
    }

private:
    // One run of `candidate`, again after a pause where the machine was busy; nothing where it failed.
    std::optional<RunSummary> timed(const std::string &mode, const TuneCandidate &candidate)
    {
        std::string name;
        bool failed = false;
        const MachineLoad load = measureWhileQuiet(kCandidateAttempts, [&](int) {
            name = "tune-" + std::to_string(++runNumber);
            std::vector<std::pair<std::string, std::string>> variables
                = {{"OMP_WAIT_POLICY", candidate.waitPolicy},
                   {"OPTLOG_SET_VARIABLES", "OMP_WAIT_POLICY"}, // the launcher leaves these alone
                   {"OPTLOG_TUNING", "candidate of optlog tune"}};
            if (!candidate.coreType.empty())
                variables.push_back({"OPENBLAS_CORETYPE", candidate.coreType});
            PlannedRun run;
            run.name = name;
            run.preset = request.preset;
            const std::string path = candidate.productPath.empty() ? "onednn" : candidate.productPath;
            run.overrides = {"train.steps=" + std::to_string(request.steps),
                             "train.eval_interval=1000000",
                             "runtime.speed_probe_every=0",
                             "precision.mode=\"" + mode + "\"",
                             "runtime.threads=" + std::to_string(candidate.threads),
                             "runtime.gemm=\"" + path + "\""};
            const int status = runChild(self, runArguments(run, study), variables, true);
            if (status != 0)
                std::cerr << "optlog tune: the run with " << candidate.label() << " failed (exit " << status << ")\n";
            failed = status != 0;
            return !failed;
        });
        if (failed)
            return std::nullopt;
        if (load.busy()) {
            busy = load.describe();
            return std::nullopt;
        }
        const Store store(study, Store::Access::ReadOnly);
        return summarize(store, *store.findRun(name));
    }
};

void printTimings(const std::string &what, const TuneRequest &request, const std::vector<TuneCandidate> &candidates,
                  const std::vector<std::string> &reached = {})
{
    std::printf("%s (%s, %d steps, %d rounds):\n", what.c_str(), request.preset.c_str(), request.steps, request.rounds);
    for (size_t i = 0; i < candidates.size(); ++i) {
        const TuneCandidate &c = candidates[i];
        std::printf("  %-32s %9.0f tokens/s median of", c.label().c_str(), c.median());
        for (double t : c.tokensPerSecond)
            std::printf(" %.0f", t);
        if (i < reached.size())
            std::printf("  [%s]", reached[i].c_str());
        std::printf("\n");
    }
}

// Whether every precision of `modes` is tuned here by a full tuning, not just a quick probe.
bool tunedByTune(const std::vector<std::string> &modes, const std::string &cache, const std::string &key)
{
    return std::all_of(modes.begin(), modes.end(), [&](const std::string &mode) {
        const std::optional<TunedSettings> tuned = readTuning(cache, key, precisionFamily(mode));
        return tuned && tuned->measuredBy == kMeasuredByTune;
    });
}

// The OpenBLAS core types to time: "" (OpenBLAS's own choice), and a better one than its generic
// kernels where the CPU's flags allow one, the user or system has not set OPENBLAS_CORETYPE, and a
// GEMM with it (in a child, `optlog tune --gemm-check`) matches a reference result. Says which.
std::vector<std::string> coreTypeCandidates(const std::string &self)
{
    std::vector<std::string> coreTypes = {""};
    const char *userCore = std::getenv("OPENBLAS_CORETYPE");
    const std::string generic = blasCoreName();
    const std::string better = betterCoreType(generic, captureEnvironment({1, 1}, {}).value("cpu_flags", ""));
    if (userCore) {
        std::cout << "optlog tune: OPENBLAS_CORETYPE=" << userCore << " is set by the user or the system: kept\n";
    } else if (!better.empty()) {
        const int check = runChild(self, {"tune", "--gemm-check"}, {{"OPENBLAS_CORETYPE", better}}, true);
        std::cout << "optlog tune: OpenBLAS chose its generic " << generic << " kernels; " << better
                  << (check == 0 ? " passes the GEMM check and is a candidate\n" : " fails the GEMM check: not used\n");
        if (check == 0)
            coreTypes.push_back(better);
    }
    return coreTypes;
}

// The settings kept for `family`, and how much faster they train than the untuned default.
void printBest(const std::string &family, const TunedSettings &settings, const std::vector<TuneCandidate> &candidates,
               int cores)
{
    const TuneCandidate best{settings.threads, settings.waitPolicy, settings.coreType, settings.productPath, {}};
    const auto untuned = std::find_if(candidates.begin(), candidates.end(),
                                      [cores](const TuneCandidate &c) { return c.isUntunedDefault(cores); });
    std::printf("  best for %s: %s, %.2fx the untuned default (%s)\n", family.c_str(), best.label().c_str(),
                settings.untunedTokensPerSecond > 0 ? settings.tokensPerSecond / settings.untunedTokensPerSecond : 0.0,
                untuned != candidates.end() ? untuned->label().c_str() : "none");
}

} // namespace

int tuneCommand(const TuneRequest &request, const std::string &self)
{
    if (const int refused = refuseBadInput("tune", [&] {
            busyShareAllowed();
            for (const std::string &mode : request.modes) {
                precisionFamily(mode);
                // The candidates' config, as their runs will load it: refused here, before any runs.
                loadRunConfig(request.preset, "", {"precision.mode=\"" + mode + "\""});
            }
        }))
        return refused;
    const std::string key = machineKey();
    const std::string cache = tuningCacheFile();
    if (request.status)
        return tuneStatus(cache, key);
    // A quick probe's settings are a first guess: --if-needed replaces them with a tuning.
    if (request.ifNeeded && tunedByTune(request.modes, cache, key)) {
        std::cout << "optlog tune: this machine is already tuned (" << cache << ")\n";
        return kExitOk;
    }
    std::cout << "optlog tune: the product paths of this build: " << describeBuildPaths() << "\n";
    const int cores = defaultThreads();
    const std::vector<std::string> coreTypes = coreTypeCandidates(self);

    const PrivateFolder folder("optlog-tune");
    CandidateRuns runs{self, request, folder.file("tune.sqlite"), 0, {}};
    int kept = 0; // precisions tuned and saved
    for (const std::string &mode : request.modes) {
        const std::string family = precisionFamily(mode);
        runs.busy.clear();
        std::vector<TuneCandidate> candidates = tuneCandidates(cores, coreTypes);
        const auto failedRatherThanBusy = [&] {
            if (runs.busy.empty())
                return true;
            std::cout << "optlog tune: the machine was busy while the candidates ran (" << runs.busy
                      << "): nothing is kept for " << family << "; tune again when it is quiet\n";
            return false;
        };
        if (!runs.time(mode, candidates)) {
            if (failedRatherThanBusy())
                return kExitFailed;
            continue;
        }
        printTimings(mode, request, candidates);
        TunedSettings settings = bestSettings(candidates, cores);
        settings.measuredBy = request.quick ? kMeasuredByProbe : kMeasuredByTune;
        // Then the paths of the products, at the settings just chosen: which is fastest depends on
        // the CPU's kernels (AMX, AVX-512 BF16), not on anything its flags alone say.
        std::vector<std::string> paths;
        for (const ProductPath path : productPathCandidates(scalarType(precisionModeNamed(mode).compute)))
            paths.push_back(pathName(path));
        if (paths.size() > 1) {
            std::vector<TuneCandidate> pathRuns = pathCandidates(settings, paths);
            std::vector<std::string> reached;
            if (!runs.time(mode, pathRuns, &reached)) {
                if (failedRatherThanBusy())
                    return kExitFailed;
                continue;
            }
            printTimings(mode + " products", request, pathRuns, reached);
            choosePath(settings, pathRuns, reached);
        }
        writeTuning(cache, key, family, settings);
        ++kept;
        printBest(family, settings, candidates, cores);
    }
    if (kept > 0)
        std::cout << "optlog tune: saved in " << cache << "; `optlog run` uses it from now on\n";
    return kExitOk;
}

} // namespace optlog
