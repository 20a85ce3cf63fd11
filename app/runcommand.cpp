// SPDX-License-Identifier: MIT
#include "app/commands.h"

#include "core/config/config.h"
#include "core/memorymodel/memorymodel.h"
#include "core/store/store.h"
#include "core/engine/calibration.h"
#include "core/engine/countingallocator.h"
#include "core/engine/device.h"
#include "core/engine/environment.h"
#include "core/engine/precision.h"
#include "core/engine/studyrecorder.h"
#include "core/engine/trainer.h"

#include <atomic>
#include <csignal>
#include <iostream>

#include <unistd.h>

namespace optlog {

namespace {

std::atomic<bool> g_stopRequested{false};

// The first SIGINT or SIGTERM asks the trainer to finish its step and stop; a second one
// gets the default action, so a hung run can still be killed from the terminal.
void requestStop(int signal)
{
    g_stopRequested.store(true);
    std::signal(signal, SIG_DFL);
}

} // namespace

int runCommand(const RunRequest &request)
{
    // Everything that can refuse the input happens before the study file is opened,
    // so a bad config or corpus writes nothing.
    RunConfig config;
    TokenSplit data;
    c10::Device device(c10::DeviceType::CPU);
    try {
        config = loadRunConfig(request.preset, request.configFile, request.overrides);
        // A device this build or machine lacks, or a mode or attention it cannot run, is refused here.
        device = runDevice(config);
        data = loadTokens(config.data, config.model.vocabSize, config.model.contextLength);
    } catch (const ConfigError &e) {
        std::cerr << "optlog run: " << e.what() << "\n";
        return kExitBadInput;
    } catch (const DataError &e) {
        std::cerr << "optlog run: " << e.what() << "\n";
        return kExitBadInput;
    }

    std::unique_ptr<Store> store;
    try {
        store = std::make_unique<Store>(request.study);
    } catch (const StoreError &e) {
        std::cerr << "optlog run: " << e.what() << "\n";
        return kExitBadInput;
    }

    const nlohmann::json heap = keepTensorMemoryInHeap();
    CountingAllocator::install();
    const ThreadSettings threads = applyThreadSettings(config.runtime);
    // Before the budget: the calibration's matrices are the machine's, not the run's.
    const MatmulPeak peak = matmulPeak(config, threads.intraOp);
    if (!config.memory.budget.empty())
        CountingAllocator::instance().setBudget(parseBytes(config.memory.budget, "memory.budget"));
    std::signal(SIGINT, requestStop);
    std::signal(SIGTERM, requestStop);

    const int64_t runId = store->createRun(config.name, toToml(config));
    nlohmann::json environment = captureEnvironment(threads, heap);
    environment["device"] = describeDevice(device);
    environment["matmul_peak"] = peak.toJson();
    store->setEnvironment(runId, environment.dump());
    const std::vector<MemoryRow> predicted = estimateMemory(config).rows();
    store->replaceMemory(runId, predicted);

    StudyRecorder::Options options;
    options.jsonLines = request.jsonLines;
    options.progress = isatty(STDERR_FILENO);
    options.allocatorBytes = [memory = DeviceMemory(device)] { return memory.inUseAndPeakBytes(); };
    StudyRecorder recorder(*store, runId, config.train.steps, options);
    recorder.started(std::string(config.memory.budget.empty() ? "" : "memory budget " + config.memory.budget + "; ")
                                  + "data: " + data.description + "; threads: " + std::to_string(threads.intraOp)
                                  + " intra-op, " + std::to_string(threads.blas) + " BLAS; device: " + describeDevice(device));

    TrainingOutcome outcome;
    try {
        Trainer trainer(config, std::move(data), uint64_t(store->studySeed()));
        outcome = trainer.run(recorder, g_stopRequested);
    } catch (const std::exception &e) {
        // Building the model or its optimizer can already exceed a budget.
        const auto refusal = CountingAllocator::instance().refusal();
        outcome.outcome = refusal ? Outcome::Oom : Outcome::Failed;
        outcome.message = refusal ? MemoryBudgetExceeded(*refusal).what() : e.what();
        outcome.refusal = refusal;
        CountingAllocator::instance().setBudget(0);
    }
    if (outcome.refusal)
        recorder.event(EventKind::Oom, nlohmann::json{{"phase", outcome.refusal->phase},
                                             {"requested_bytes", outcome.refusal->requestedBytes},
                                             {"in_use_bytes", outcome.refusal->inUseBytes},
                                             {"budget_bytes", outcome.refusal->budgetBytes},
                                             {"step", outcome.step}}
                                  .dump());
    std::vector<MemoryRow> memory = predicted;
    memory.insert(memory.end(), outcome.measuredMemory.begin(), outcome.measuredMemory.end());
    store->replaceMemory(runId, memory);
    if (!outcome.dtypes.empty())
        store->setDtypes(runId, nlohmann::json(outcome.dtypes).dump());
    recorder.finished(outcome.outcome, outcome.step, outcome.message);

    std::cerr << "optlog run: run " << runId << " (" << config.name << ") " << outcomeName(outcome.outcome)
              << (outcome.message.empty() ? "" : ": " + outcome.message) << " -> " << request.study << "\n";
    return exitCodeFor(outcome.outcome);
}

} // namespace optlog
