// SPDX-License-Identifier: MIT
// `optlog quantize`: a completed run's final weights quantized, evaluated and stored.
#include "app/cli.h"
#include "app/commands.h"
#include "app/enginework.h"
#include "core/analysis/runtables.h"
#include "core/analysis/studytext.h"
#include "core/config/configerror.h"
#include "core/contract/format.h"
#include "core/engine/memory/countingallocator.h"
#include "core/engine/quantization/quantizationevaluator.h"
#include "core/engine/run/storedweights.h"
#include "core/store/store.h"
#include "core/store/weights.h"

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
        storeQuantization(*store, run.id, result);
    std::cout << "run " << run.id << " (" << printable(run.name)
              << "), validation loss computed in FP32 on the study's "
              << "validation windows:\n"
              << alignedTable(quantizationHeader(), quantizationRows(results), "  ") << "\n"
              << quantizationUntouched() << "\n";
    return kExitOk;
}

} // namespace optlog
