// SPDX-License-Identifier: MIT
#pragma once

#include "core/analysis/studycomparison.h"
#include "core/contract/outcome.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace optlog {

// Runs `prepare`, which reads the command's input; when it refuses it (a config, data or study file
// error), says why as "optlog <command>: ..." and returns kExitBadInput, else 0.
int refuseBadInput(const char *command, const std::function<void()> &prepare);

struct RunRequest
{
    std::string configFile;
    std::string preset;
    std::string study; // empty: studyFilePath("study.sqlite")
    std::vector<std::string> overrides;
    bool jsonLines = false;
    int64_t repeats = 1; // more than one: each replicate over seeds in its own engine process
    bool force = false;  // train even when predicted not to fit the budget or the machine
};
// `self` runs the replicates when there are several.
int runCommand(const RunRequest &request, const std::string &self);
// Holds SIGINT and SIGTERM until runCommand() can handle them, also across the re-execution with
// the tuned variables (a signal mask survives exec), so that a signal while starting cancels (exit
// 4) instead of killing.
void holdStopSignals();

struct StudyRequest
{
    std::string plan = "default"; // built-in study name or a study TOML file
    std::string study;            // the study file; empty = studyFilePath("<plan name>.sqlite")
    std::vector<std::string> overrides;
    std::optional<int64_t> repeats; // replicates of every run over seeds; none = as the plan says
    bool force = false;             // train runs predicted not to fit the budget or the machine
};
int studyCommand(const StudyRequest &request, const std::string &self);

struct CompareRequest
{
    std::string study;
    ComparisonRequest comparison;
};
int compareCommand(const CompareRequest &request);

struct EstimateRequest
{
    std::string configFile;
    std::string preset;
    std::vector<std::string> overrides;
    int64_t ranks = 8;  // data-parallel ranks for the ZeRO rows
    bool json = false;
};
int estimateCommand(const EstimateRequest &request);

struct FitRequest
{
    std::string configFile;
    std::string preset;
    std::vector<std::string> overrides;
    std::string budget; // "512MiB"
};
int fitCommand(const FitRequest &request);

struct ReportRequest
{
    std::string study;
    std::vector<std::string> runs;  // names or ids; empty = every run
    std::string baseline;           // name or id; empty = the first run
    double tolerance = 0.02;        // nats per token
    std::string format = "html";    // html | pdf | md | csv | json
    std::string output;             // empty = <study>-report.<format>
};
int reportCommand(const ReportRequest &request, int argc, char **argv);

struct TuneRequest
{
    std::string preset = "default";
    std::vector<std::string> modes = {"fp32", "autocast-bf16"}; // one per precision family to tune
    int steps = 15;  // per candidate run
    int rounds = 2;  // alternations of all candidates
    bool ifNeeded = false; // only when a requested family has no tuning for this machine yet
};
int tuneCommand(const TuneRequest &request, const std::string &self);
// A GEMM with the OPENBLAS_CORETYPE this process started with, against a reference: exit 0 if right.
int gemmCheckCommand();

int runsCommand(const std::string &study);
int showCommand(const std::string &study, const std::string &run);
int exportCommand(const std::string &study, const std::string &format, const std::string &output);

} // namespace optlog
