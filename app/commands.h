// SPDX-License-Identifier: MIT
#pragma once

#include "app/cli.h"
#include "core/analysis/studycomparison.h"
#include "core/cluster/slurm.h"
#include "core/config/config.h"
#include "core/config/runrequest.h"
#include "core/config/studyplan.h"
#include "core/contract/outcome.h"
#include "core/store/store.h"

#include <functional>
#include <memory>
#include <optional>
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

struct StudyRequest
{
    std::string plan = "default"; // built-in study name or a study TOML file
    std::string study;            // the study file; empty = studyFilePath("<plan name>.sqlite")
    std::vector<std::string> overrides;
    std::optional<int64_t> repeats; // replicates of every run over seeds; none = as the plan says
    bool force = false;             // train runs predicted not to fit the budget or the machine
    bool wide = false;              // the comparison as `optlog compare --wide` prints it
    std::string scheduler;          // "slurm": hand the runs to it as a job array; empty: train them here
    SubmitOptions submit;           // --partition, --max-parallel, --time, --sbatch-arg
    bool wait = false;              // with a scheduler: gather as the tasks end, then compare
    std::string host;               // train the runs on this SSH destination, one after another there
};
int studyCommand(const StudyRequest &request, const std::string &self);
// The study's comparison as its plan asks for it (baseline, tolerance, per-run baselines).
int comparePlannedStudy(const StudyPlan &plan, const std::string &studyFile, bool wide);

// Runs on a cluster (app/clustercommands.cpp). `optlog study --scheduler slurm`: gathers what earlier
// jobs finished, then submits the plan's runs still to do (planRuns' todo less those queued) as
// one job array, each task training into a shard of its own; with `wait`, gathers as
// they end and compares.
int clusterStudyCommand(const StudyRequest &request, const StudyPlan &plan, const std::string &studyFile,
                        const std::string &self);
Command addGatherCommand(CLI::App &app, const Invocation &invocation);
Command addCancelCommand(CLI::App &app, const Invocation &invocation);
// Runs on another machine over SSH (app/hostcommands.cpp, app/remotecommands.cpp, docs/remote.md).
Command addHostCommand(CLI::App &app, const Invocation &invocation);
Command addFollowCommand(CLI::App &app, const Invocation &invocation);

struct CompareRequest
{
    std::string study;
    ComparisonRequest comparison;
    bool wide = false; // every column on one line per run, for scripts; else within 120 columns
};
inline constexpr const char *kWideHelp = "print every column of the verdict table on one line per run, for scripts "
                                         "(default: within 120 columns, the verdicts in full below)";
int compareCommand(const CompareRequest &request);

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

struct FitRequest
{
    std::string configFile;
    std::string preset;
    std::vector<std::string> overrides;
    std::string budget; // "512MiB"
};

struct ReportRequest
{
    std::string study;
    std::vector<std::string> runs; // names or ids; empty = every run
    std::string baseline;          // name or id; empty = the first run
    double tolerance = 0.02;       // nats per token
    std::string format = "html";   // one of reportFormatNames()
    std::string output;            // empty = <study>-report.<format>
};
int reportCommand(const ReportRequest &request, int argc, char **argv);
// What this build's reports can be, for `--version`: with charts where it was built with Qt.
std::string reportAbility();

// Steps per candidate run of a quick probe (`optlog tune --quick`): the three warm-up steps and
// five measured ones, about a second each at the default preset here.
inline constexpr int kQuickProbeSteps = 8;

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

struct RunsRequest
{
    std::string study;
    std::string filter; // RunFilter syntax: "mode:pure-bf16 tag:long"
    bool all = false;   // archived runs too
};
int runsCommand(const RunsRequest &request);

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
// The study, for writing, or a StoreError: curation and the weights commands change a study that
// exists, never make one.
std::unique_ptr<Store> openExistingStudy(const std::string &path);
// The runs a command names (ids or names: the newest of that name), all found, or a StoreError
// naming the first that is not.
std::vector<RunRecord> namedRuns(const Store &store, const std::vector<std::string> &names);
int noteCommand(const CurateRequest &request);
int tagCommand(const CurateRequest &request);
int renameCommand(const CurateRequest &request);
int archiveCommand(const CurateRequest &request);
int deleteCommand(const CurateRequest &request);
int vacuumCommand(const std::string &study);

struct CopyRequest
{
    std::string source;
    std::vector<std::string> runs;
    std::string destination; // created when missing, with the source's study seed
    std::string suffix;      // appended to each copied run's name
};
int copyCommand(const CopyRequest &request);
// With `timeline`, only the run's memory timelines: each step's phases with their peaks.
int showCommand(const std::string &study, const std::string &run, bool timeline = false);

struct QuantizeRequest
{
    std::string study;
    std::string run;
    std::vector<std::string> schemes;   // int8, int4, int4-asym, nf4, mixed: each is evaluated
    std::vector<int64_t> groups = {64}; // weights per scale, for each 4-bit scheme
    std::string tensors = "blocks.*";   // glob patterns over the 2-D weights' names
    int64_t int8Tensors = 2;            // mixed: the most sensitive tensors kept in int8
};
// Removes the checkpoints of the named runs (all finished runs when none is named); final weights stay.
int pruneCommand(const std::string &study, const std::vector<std::string> &runs);
int exportCommand(const std::string &study, const std::string &format, const std::string &output);
// Reads one run's events (docs/events.md) from stdin into the study; exits as `optlog run` would
// for its outcome, or kExitBadInput for a stream it refused.
int recordCommand(const std::string &study);

} // namespace optlog
