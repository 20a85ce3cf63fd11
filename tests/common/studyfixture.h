// SPDX-License-Identifier: MIT
#pragma once
// Runs written into a study through the Store, as the engine writes them, for tests of what reads
// studies (curation, the commands of an `optlog` without its engine). Links optlog_store and optlog_config.

#include "core/config/config.h"
#include "core/store/store.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace optlog::testing {

// A run's config as the engine stores it: the defaults with a name, a precision and a length.
inline std::string configToml(const std::string &name, const std::string &mode, int64_t steps)
{
    RunConfig config;
    config.name = name;
    config.precision.mode = mode;
    config.train.steps = steps;
    config.memory.warmupSteps = 2;
    return toToml(config);
}

// A finished run with rows in every table a run has.
inline int64_t addFullRun(Store &store, const std::string &name, const std::string &mode, double lossOffset)
{
    const int64_t id = store.createRun(name, configToml(name, mode, 20));
    std::vector<StepMetrics> metrics;
    for (int64_t step = 0; step < 20; ++step) {
        StepMetrics m;
        m.step = step;
        m.tokens = (step + 1) * 512;
        m.trainLoss = 5.0 - 0.05 * double(step) + lossOffset;
        m.learningRate = 1e-3;
        m.gradNorm = 0.7;
        m.stepSeconds = 0.1 + 0.001 * double(step % 3);
        m.tokensPerSecond = 512 / m.stepSeconds;
        m.lossScale = 1024;
        m.machineGflops = step % 4 == 0 ? 120.0 + double(step) : 0.0;
        metrics.push_back(m);
    }
    store.appendMetrics(id, metrics);
    store.appendValidation(id, {{9, 5120, 4.6 + lossOffset, 32, 0.3}, {19, 10240, 4.1 + lossOffset, 32, 0.25}});
    store.replaceMemory(id, {{MemoryRole::Parameters, "float32", 4000, MemorySource::Predicted},
                             {MemoryRole::Parameters, "float32", 4000, MemorySource::Measured},
                             {MemoryRole::Peak, "mixed", 9100, MemorySource::Measured},
                             {MemoryRole::Peak, "mixed", 9000, MemorySource::Predicted}});
    store.addEvent(id, EventKind::Started, "data: test");
    store.addEvent(id, EventKind::LossSpike, "a spike", 7);
    TensorNumerics n;
    n.step = 10;
    n.tensor = "all parameters";
    n.fp16Underflow = 0.01;
    n.fp16Subnormal = std::nan("");
    n.scaledUnderflow = 0.0;
    n.lossScale = 65536;
    n.vanishingUpdates = 0.2;
    n.activationMax = std::nan("");
    store.appendNumerics(id, {n});
    store.setEnvironment(id, R"({"threads":2})");
    store.setDtypes(id, R"({"weights":"float32"})");
    // Trained over two ranks: rank 1's memory and both ranks' records.
    store.replaceMemory(id,
                        {{MemoryRole::OptimizerState, "float32", 4100, MemorySource::Measured},
                         {MemoryRole::CommunicationBuffers, "float32", 2048, MemorySource::Measured}},
                        1);
    store.storeRanks(id, {{0, "here", 11, R"({"threads":1})", 18, 1.8, 0.25, "completed", ""},
                          {1, "there", 12, R"({"threads":1})", 18, 1.9, 0.3 + lossOffset, "completed", ""}});
    store.finishRun(id, Outcome::Completed, 19, "");
    return id;
}

} // namespace optlog::testing
