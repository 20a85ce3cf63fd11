// SPDX-License-Identifier: MIT
// The commands on a run's weights files: prune, and quantize's options (its work is the
// engine's: app/engine/quantize.cpp).
#include "app/cli.h"
#include "app/commands.h"
#include "app/enginework.h"
#include "core/analysis/studytext.h"
#include "core/config/config.h"
#include "core/config/configerror.h"
#include "core/contract/format.h"
#include "core/store/store.h"
#include "core/store/weights.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

namespace optlog {

namespace {

// Removes the checkpoints of the named runs (all finished runs when none is named); final weights stay.
int pruneCommand(const std::string &study, const std::vector<std::string> &runs)
{
    return refuseBadInput("prune", [&] {
        const auto store = openExistingStudy(study);
        const std::vector<RunRecord> chosen = runs.empty() ? store->runs() : namedRuns(*store, runs);
        int64_t freed = 0;
        for (const RunRecord &run : chosen)
            if (run.isFinished())
                freed += pruneCheckpoints(*store, run.id);
        std::cout << "optlog prune: removed " << formatBytes(freed) << " of checkpoints from " << study
                  << "; final weights are kept\n";
    });
}

} // namespace

Command addQuantizeCommand(CLI::App &app, const Invocation &)
{
    auto request = std::make_shared<QuantizeRequest>();
    auto groups = std::make_shared<std::vector<std::string>>(std::vector<std::string>{"64"});
    CLI::App *command = app.add_subcommand("quantize", "quantize a completed run's final weights and measure what it "
                                                       "costs in loss and saves in bytes");
    command->add_option("study", request->study, "study file")->required();
    command->add_option("run", request->run, "run name or id")->required();
    command
        ->add_option("--scheme", request->schemes,
                     "int8 (per output channel), int4 (symmetric absmax), "
                     "int4-asym (min-max, zero point), nf4, mixed (int4, the "
                     "most sensitive tensors int8); a comma-separated list "
                     "quantizes each")
        ->delimiter(',');
    command
        ->add_option("--group", *groups,
                     "weights per scale for the 4-bit schemes: a power of two, or a "
                     "comma-separated list (32,64,128); default 64")
        ->delimiter(',');
    command
        ->add_option("--tensors", request->tensors,
                     "which weight matrices, glob patterns over their names, "
                     "comma-separated (embeddings: token_embedding.weight)")
        ->capture_default_str();
    command->add_option("--int8-tensors", request->int8Tensors, "mixed: the most sensitive tensors kept in int8")
        ->capture_default_str();
    return {command, [request, groups] {
                request->groups.clear();
                for (const std::string &group : *groups) {
                    char *end = nullptr;
                    const long long value = std::strtoll(group.c_str(), &end, 10);
                    if (group.empty() || *end != '\0' || value <= 0)
                        return refuseBadInput("quantize", [&] {
                            throw ConfigError("--group '" + group
                                              + "' is not a group size; give a power of two "
                                                "such as 32, 64 or 128");
                        });
                    request->groups.push_back(value);
                }
                return quantizeCommand(*request);
            }};
}

Command addPruneCommand(CLI::App &app, const Invocation &)
{
    auto study = std::make_shared<std::string>();
    auto runs = std::make_shared<std::vector<std::string>>();
    CLI::App *command = app.add_subcommand("prune", "remove runs' checkpoints (final weights are kept)");
    command->add_option("study", *study, "study file")->required();
    command->add_option("runs", *runs, "run names or ids; default every finished run");
    return {command, [study, runs] { return pruneCommand(*study, *runs); }};
}

} // namespace optlog
