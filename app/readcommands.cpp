// SPDX-License-Identifier: MIT
// The commands that read a study or a config: runs, show, compare, export, and estimate's options
// (its prediction is the engine's, calibrated on this machine: app/engine/estimate.cpp).
#include "app/readcommands.h"

#include "app/cli.h"
#include "app/commands.h"
#include "app/enginework.h"
#include "core/analysis/runfilter.h"
#include "core/analysis/runsummary.h"
#include "core/analysis/studycomparison.h"
#include "core/analysis/studytext.h"
#include "core/analysis/timelinetables.h"
#include "core/cluster/slurm.h"
#include "core/cluster/tasklist.h"
#include "core/config/config.h"
#include "core/config/configerror.h"
#include "core/contract/inputerror.h"
#include "core/store/clusterjobs.h"
#include "core/store/store.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <map>
#include <memory>

namespace optlog {

namespace {

struct RunsRequest
{
    std::string study;
    std::string filter; // RunFilter syntax: "mode:pure-bf16 tag:long"
    bool all = false;   // archived runs too
};

// The study, read-only, or nothing after saying why it cannot be opened: reading never needs to
// write, so a study on a read-only disk or of another user can be read.
std::unique_ptr<Store> openStudy(const std::string &path, const char *command)
{
    std::unique_ptr<Store> store;
    refuseBadInput(command, [&] { store = std::make_unique<Store>(path, Store::Access::ReadOnly); });
    return store;
}

int runsCommand(const RunsRequest &request)
{
    auto store = openStudy(request.study, "runs");
    if (!store)
        return kExitBadInput;
    RunFilter filter;
    // The keys of recorded runs' configs are filter words too.
    const auto parse = [&] { filter = RunFilter::parse(request.filter, recordedConfigKeys(store->runs())); };
    if (const int refused = refuseBadInput("runs", parse))
        return refused;
    filter.setShowArchived(request.all);
    std::cout << formatRunList(*store, filter);
    if (!clusterJobs(*store).empty()) {
        std::unique_ptr<Slurm> slurm;
        try {
            slurm = std::make_unique<Slurm>();
        } catch (const SchedulerError &) {
            // Not on a Slurm machine: the states as last seen, marked so.
        }
        std::cout << formatPendingClusterTasks(*store, [&slurm](const std::string &jobId, int64_t tasks) {
            return slurm ? slurm->taskStates(jobId, tasks) : std::map<int64_t, std::string>{};
        });
    }
    return kExitOk;
}

// With `timeline`, only the run's memory timelines: each step's phases with their peaks.
int showCommand(const std::string &path, const std::string &runName, bool timeline)
{
    auto store = openStudy(path, "show");
    if (!store)
        return kExitBadInput;
    RunRecord run;
    if (const int refused = refuseBadInput("show", [&] { run = store->requireRunNamed(runName); }))
        return refused;
    if (!timeline) {
        std::cout << formatRunDetail(*store, run);
        return kExitOk;
    }
    const RunSummary summary = summarize(*store, run);
    std::cout << formatTimelines(summary.timelines, summary.predictedPeakPhase);
    return kExitOk;
}

} // namespace

int compareCommand(const CompareRequest &request)
{
    auto store = openStudy(request.study, "compare");
    if (!store)
        return kExitBadInput;
    return refuseBadInput("compare", [&] {
        std::cout << formatStudyComparison(request.study, compareStudy(*store, request.comparison), request.wide);
    });
}

namespace {

int exportCommand(const std::string &path, const std::string &format, const std::string &output)
{
    auto store = openStudy(path, "export");
    if (!store)
        return kExitBadInput;
    std::ofstream file;
    if (!output.empty()) {
        file.open(output);
        if (!file) {
            std::cerr << "optlog export: cannot write '" << output << "'\n";
            return kExitBadInput;
        }
    }
    std::ostream &out = output.empty() ? std::cout : file;
    if (format == "csv")
        writeMetricsCsv(*store, out);
    else
        out << studyJson(*store);
    return kExitOk;
}

} // namespace

Command addCompareCommand(CLI::App &app, const Invocation &)
{
    auto request = std::make_shared<CompareRequest>();
    CLI::App *command = app.add_subcommand("compare", "compare runs against a baseline at matched tokens");
    command->add_option("study", request->study, "study file")->required();
    command->add_option("--baseline", request->comparison.baseline, "baseline run (name or id); default the first run");
    command->add_option("--runs", request->comparison.runs, "runs to compare (names or ids); default all")
        ->delimiter(',');
    command
        ->add_option("--tolerance", request->comparison.tolerance,
                     "validation-loss difference counted as noise, "
                     "nats per token")
        ->capture_default_str()
        ->check(toleranceCheck());
    command->add_flag("--wide", request->wide, kWideHelp);
    return {command, [request] { return compareCommand(*request); }};
}

Command addEstimateCommand(CLI::App &app, const Invocation &)
{
    auto request = std::make_shared<EstimateRequest>();
    CLI::App *command = app.add_subcommand("estimate", "predict memory by role, with dtypes, without running");
    addConfigOptions(command, request->preset, request->configFile, request->overrides);
    command->add_option("--ranks", request->ranks, "data-parallel ranks for the ZeRO rows")->capture_default_str();
    command->add_flag("--json", request->json, "print JSON");
    command->add_option("--compute-capability", request->computeCapability,
                        "with runtime.device=cuda where no GPU is: the chip to size CUDA's workspaces for (9.0 "
                        "for H100 and H200)");
    command->add_flag("--check-applicable", request->checkApplicable,
                      "only check that the run's model can take the config (a TorchScript module is loaded and its "
                      "contract's forwards run) and print {\"applicable\": true|false, \"field\", \"reason\"}");
    return {command, [request] {
                if (request->configFile.empty() && request->preset.empty())
                    request->preset = "default";
                return estimateCommand(*request);
            }};
}

Command addRunsCommand(CLI::App &app, const Invocation &)
{
    auto request = std::make_shared<RunsRequest>();
    CLI::App *command = app.add_subcommand("runs", "list the runs of a study");
    command->add_option("study", request->study, "study file")->required();
    command->add_option("--filter", request->filter,
                        "words every listed run matches: text, tag:NAME, name:, note:, "
                        "group:, outcome:, is:archived, a config field "
                        "(mode:pure-bf16); -word leaves out");
    command->add_flag("--all", request->all, "list archived runs too");
    return {command, [request] { return runsCommand(*request); }};
}

Command addShowCommand(CLI::App &app, const Invocation &)
{
    auto study = std::make_shared<std::string>(), run = std::make_shared<std::string>();
    auto timeline = std::make_shared<bool>(false);
    CLI::App *command = app.add_subcommand("show", "show one run: config, environment, memory by role, events");
    command->add_option("study", *study, "study file")->required();
    command->add_option("run", *run, "run name or id")->required();
    command->add_flag("--timeline", *timeline,
                      "only its memory timelines: the peak of each phase of its first and first measured step");
    return {command, [study, run, timeline] { return showCommand(*study, *run, *timeline); }};
}

Command addExportCommand(CLI::App &app, const Invocation &)
{
    struct Request
    {
        std::string study, format = "csv", output;
    };
    auto request = std::make_shared<Request>();
    CLI::App *command = app.add_subcommand("export", "export every run's metrics");
    command->add_option("study", request->study, "study file")->required();
    command->add_option("--format", request->format, "csv or json")
        ->check(CLI::IsMember({"csv", "json"}))
        ->capture_default_str();
    command->add_option("-o,--output", request->output, "output file; default standard output");
    return {command, [request] { return exportCommand(request->study, request->format, request->output); }};
}

} // namespace optlog
