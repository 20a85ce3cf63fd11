// SPDX-License-Identifier: MIT
// The commands that read a study or a config: estimate, runs, show, compare, export.
#include "app/commands.h"

#include "core/analysis/runfilter.h"
#include "core/analysis/studycomparison.h"
#include "core/analysis/studytext.h"
#include "core/config/config.h"
#include "core/memorymodel/memorymodel.h"
#include "core/store/store.h"

#include <fstream>
#include <iostream>
#include <memory>

namespace optlog {

namespace {

// The study, read-only, or nothing after saying why it cannot be opened: reading never needs to
// write, so a study on a read-only disk or of another user can be read.
std::unique_ptr<Store> openStudy(const std::string &path, const char *command)
{
    std::unique_ptr<Store> store;
    refuseBadInput(command, [&] { store = std::make_unique<Store>(path, Store::Access::ReadOnly); });
    return store;
}

} // namespace

int estimateCommand(const EstimateRequest &request)
{
    RunConfig config;
    if (const int refused =
            refuseBadInput("estimate", [&] { config = loadRunConfig(request.preset, request.configFile, request.overrides); }))
        return refused;
    const MemoryEstimate estimate = estimateMemory(config);
    std::cout << (request.json ? formatEstimateJson(config, estimate, request.ranks)
                               : formatEstimate(config, estimate, request.ranks));
    return kExitOk;
}

int runsCommand(const RunsRequest &request)
{
    RunFilter filter;
    if (const int refused = refuseBadInput("runs", [&] { filter = RunFilter::parse(request.filter); }))
        return refused;
    filter.setShowArchived(request.all);
    auto store = openStudy(request.study, "runs");
    if (!store)
        return kExitBadInput;
    std::cout << formatRunList(*store, filter);
    return kExitOk;
}

int showCommand(const std::string &path, const std::string &runName)
{
    auto store = openStudy(path, "show");
    if (!store)
        return kExitBadInput;
    RunRecord run;
    if (const int refused = refuseBadInput("show", [&] { run = store->requireRunNamed(runName); }))
        return refused;
    std::cout << formatRunDetail(*store, run);
    return kExitOk;
}

int compareCommand(const CompareRequest &request)
{
    auto store = openStudy(request.study, "compare");
    if (!store)
        return kExitBadInput;
    return refuseBadInput("compare", [&] {
        std::cout << formatStudyComparison(request.study, compareStudy(*store, request.comparison));
    });
}

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

} // namespace optlog
