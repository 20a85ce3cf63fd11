// SPDX-License-Identifier: MIT
// The commands on a run's weights files: quantize and prune.
#include "app/cli.h"
#include "app/commands.h"
#include "core/analysis/analysis.h"
#include "core/analysis/studytext.h"
#include "core/config/config.h"
#include "core/config/configerror.h"
#include "core/contract/format.h"
#include "core/engine/memory/countingallocator.h"
#include "core/engine/quantization/quantizationevaluator.h"
#include "core/engine/run/storedweights.h"
#include "core/store/store.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

namespace optlog {

namespace {

// Every scheme crossed with every group; int8 (one scale per row) once, whatever the groups.
std::vector<QuantizationRequest> requestsOf(const QuantizeRequest &request)
{
    if (request.schemes.empty())
        throw ConfigError("--scheme is required: int8, int4, int4-asym, nf4 or mixed (a comma-separated list "
                          "quantizes each)");
    std::vector<QuantizationRequest> requests;
    for (const std::string &scheme : request.schemes)
        for (size_t i = 0; i < request.groups.size(); ++i) {
            if (scheme == "int8" && i > 0)
                break;
            QuantizationRequest one;
            one.scheme = scheme;
            one.groupSize = request.groups[i];
            one.tensors = request.tensors;
            one.int8Tensors = request.int8Tensors;
            requests.push_back(one);
        }
    return requests;
}

} // namespace

int quantizeCommand(const QuantizeRequest &request)
{
    std::unique_ptr<Store> store;
    RunRecord run;
    std::vector<QuantizationRequest> requests;
    std::unique_ptr<QuantizationEvaluator> evaluator;
    CountingAllocator::install(); // the dequantization workspace and the activations are measured
    if (const int refused = refuseBadInput("quantize", [&] {
            requests = requestsOf(request);
            for (const auto &one : requests) // before the weights are read
                QuantizationEvaluator::checkScheme(one.scheme);
            store = openExistingStudy(request.study);
            run = namedRuns(*store, {request.run}).front();
            const QuantizableRun quantizable = quantizableRun(*store, run);
            evaluator = std::make_unique<QuantizationEvaluator>(quantizable.config, quantizable.weightsPath,
                                                                uint64_t(run.validationSeed));
            for (const auto &one : requests)
                evaluator->check(one);
        }))
        return refused;

    std::vector<QuantizationResult> results;
    for (const auto &one : requests) {
        std::cerr << "optlog quantize: " << one.scheme
                  << (one.scheme == "int8" ? "" : " group " + std::to_string(one.groupSize)) << " ...\n";
        results.push_back(evaluator->evaluate(one));
    }
    for (const auto &result : results) // all evaluated before any is stored
        store->storeQuantization(run.id, result);
    std::cout << "run " << run.id << " (" << printable(run.name)
              << "), validation loss computed in FP32 on the study's "
              << "validation windows:\n"
              << alignedTable(quantizationHeader(), quantizationRows(results), "  ") << "\n"
              << quantizationUntouched() << "\n";
    return kExitOk;
}

int pruneCommand(const std::string &study, const std::vector<std::string> &runs)
{
    return refuseBadInput("prune", [&] {
        const auto store = openExistingStudy(study);
        const std::vector<RunRecord> chosen = runs.empty() ? store->runs() : namedRuns(*store, runs);
        int64_t freed = 0;
        for (const RunRecord &run : chosen)
            if (run.isFinished())
                freed += store->pruneCheckpoints(run.id);
        std::cout << "optlog prune: removed " << formatBytes(freed) << " of checkpoints from " << study
                  << "; final weights are kept\n";
    });
}

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
