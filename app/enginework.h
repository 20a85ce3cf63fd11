// SPDX-License-Identifier: MIT
#pragma once
// optlog is two binaries with one command line (docs/building.md). `optlog-engine` trains and
// measures with LibTorch. `optlog`, which links no LibTorch, runs every command that reads,
// compares, reports, follows, or sends runs to another machine, and hands the commands that train
// to optlog-engine where it is installed. This header is the line between them: each function here
// is defined twice, in app/engine/ for optlog-engine and in app/withoutengine.cpp for optlog, where
// the work that needs LibTorch refuses and names the package that brings it (exit 2).

#include "app/cli.h"
#include "core/config/config.h"
#include "core/config/runrequest.h"
#include "core/config/studyplan.h"
#include "core/store/store.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace optlog {

// optlog: where optlog-engine is installed and `argv` names a command it runs, replaces this
// process with it (same arguments, same process: a parent's pid, signals and pipes reach the engine
// as before); returns otherwise. optlog-engine: returns at once.
void handToEngine(char **argv);
// optlog-engine: 0. optlog: says that `command` needs optlog-engine here and returns kExitBadInput.
int refuseWithoutEngine(const std::string &command);
// What `--version` prints after the version: LibTorch's build and what it can do, or that there is none.
std::string buildLine();

// `optlog run` on this machine; `run` is the request as parsed, `options` what the engine adds to it.
struct RunOptions
{
    std::string budget;              // --memory-budget
    std::vector<std::string> resume; // --resume STUDY RUN
    std::optional<int64_t> ranks;    // --ranks
};
int runHere(RunRequest &run, const RunOptions &options, const Invocation &invocation);

struct TuneRequest
{
    std::string preset = "default";
    std::vector<std::string> modes = {"fp32", "autocast-bf16"}; // one per precision family to tune
    int steps = 15;                                             // per candidate run
    int rounds = 2;                                             // alternations of all candidates
    bool ifNeeded = false; // only when a requested family has no tuning for this machine yet
    bool quick = false;    // one round of short runs, recorded as a quick probe
    bool status = false;   // say which families are tuned here, and by what; measure nothing
    // Only the matmul peak, the denominator of MFU, for recorded runs (your own trainer's): on
    // peakDevice at peakThreads (0: LibTorch's default, as PyTorch's), with this shell's variables.
    bool peakOnly = false;
    std::string peakDevice = "cpu";
    int peakThreads = 0;
};
int tuneCommand(const TuneRequest &request, const std::string &self);
// `optlog tune --peak-only`: the matmul peak measured (or read from the cache) and printed.
int peakCommand(const TuneRequest &request);
// A GEMM with the OPENBLAS_CORETYPE this process started with, against a reference: exit 0 if right.
int gemmCheckCommand();

struct FitRequest
{
    std::string configFile;
    std::string preset;
    std::vector<std::string> overrides;
    std::string budget; // "512MiB"
};
int fitCommand(const FitRequest &request, const Invocation &invocation);

struct EstimateRequest
{
    std::string configFile;
    std::string preset;
    std::vector<std::string> overrides;
    int64_t ranks = 8; // data-parallel ranks for the ZeRO rows
    bool json = false;
    std::string computeCapability; // runtime.device = "cuda" without a GPU here: the chip's, "9.0"
    bool checkApplicable = false;  // only whether the run's model can take the config, as JSON
};
int estimateCommand(const EstimateRequest &request);

struct QuantizeRequest
{
    std::string study;
    std::string run;
    std::vector<std::string> schemes;   // int8, int4, int4-asym, nf4, mixed: each is evaluated
    std::vector<int64_t> groups = {64}; // weights per scale, for each 4-bit scheme
    std::string tensors = "blocks.*";   // glob patterns over the 2-D weights' names
    int64_t int8Tensors = 2;            // mixed: the most sensitive tensors kept in int8
};
// Quantizes a completed run's final weights with each scheme and group, evaluates each on the
// study's validation windows, stores every result (all or none) and prints the table.
int quantizeCommand(const QuantizeRequest &request);
// The matmul peak a recorded run is judged against (core/recording/recordedstream.h: MatmulPeakOf):
// the engine's cache. optlog: none ("not_measured"), with what measures one.
nlohmann::json recordedMatmulPeak(const nlohmann::json &environment);
// `optlog host describe`: this machine, its LibTorch and GPUs, as JSON for the laptop's side.
int hostDescribeCommand();

// Throws NotApplicable when the TorchScript module of `config` cannot take it, by loading it and
// running its contract's forwards (planruns.h: ModuleCheck). optlog: the machine that trains checks.
void requireModelTakes(const RunConfig &config);
// The shard of an earlier cluster task where `run` stopped (cancelled, crashed) with a checkpoint
// it can go on from, newest first; empty when there is none. optlog: none (reading a checkpoint
// needs LibTorch), so each such run starts afresh.
std::string resumableShard(const Store &study, const PlannedRun &run);

} // namespace optlog
