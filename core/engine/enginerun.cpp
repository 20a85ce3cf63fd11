// SPDX-License-Identifier: MIT
#include "core/engine/enginerun.h"

#include "core/memorymodel/memorymodel.h"
#include "core/engine/countingallocator.h"
#include "core/engine/device.h"
#include "core/engine/studyrecorder.h"

#include <stdexcept>

namespace optlog {

namespace {

// What the run starts with, for its started event: the budget, the data, the threads, the device.
std::string startMessage(const RunConfig &config, const TokenSplit &data, const ThreadSettings &threads,
                         c10::Device device)
{
    return std::string(config.memory.budget.empty() ? "" : "memory budget " + config.memory.budget + "; ")
           + "data: " + data.description + "; threads: " + std::to_string(threads.intraOp) + " intra-op, "
           + std::to_string(threads.blas) + " BLAS; device: " + describeDevice(device);
}

// What the budget refused, as the oom event's message: a JSON object a reader can take apart.
std::string refusalMessage(const BudgetRefusal &refusal, int64_t step)
{
    return nlohmann::json{{"phase", refusal.phase},
                          {"requested_bytes", refusal.requestedBytes},
                          {"in_use_bytes", refusal.inUseBytes},
                          {"budget_bytes", refusal.budgetBytes},
                          {"step", step}}
        .dump();
}

} // namespace

EngineRun::EngineRun(RunConfig config)
    : m_config(std::move(config))
    , m_device(runDevice(m_config))
    , m_data(loadTokens(m_config.data, m_config.model.vocabSize, m_config.model.contextLength))
{
}

EngineRun::~EngineRun() = default;

void EngineRun::open(const std::string &studyPath)
{
    m_store = std::make_unique<Store>(studyPath);
    m_heap = keepTensorMemoryInHeap();
    CountingAllocator::install();
    m_threads = applyThreadSettings(m_config.runtime);
    // Before the budget: the calibration's matrices are the machine's, not the run's.
    m_peak = matmulPeak(m_config, m_threads.intraOp);
}

EngineRun::Result EngineRun::train(const Options &options, const std::atomic<bool> &stopRequested)
{
    if (!m_store)
        throw std::logic_error("EngineRun::train() needs open() first");
    Store &store = *m_store;
    auto &allocator = CountingAllocator::instance();
    if (!m_config.memory.budget.empty())
        allocator.setBudget(parseBytes(m_config.memory.budget, "memory.budget"));

    Result result;
    result.runId = store.createRun(m_config.name, toToml(m_config), m_config.group);
    nlohmann::json environment = captureEnvironment(m_threads, m_heap);
    environment["device"] = describeDevice(m_device);
    environment["matmul_peak"] = m_peak.toJson();
    store.setEnvironment(result.runId, environment.dump());
    // The prediction is stored first, so the workbench shows it while the run trains.
    const std::vector<MemoryRow> predicted = estimateMemory(m_config).rows();
    store.replaceMemory(result.runId, predicted);

    StudyRecorder::Options recording;
    recording.jsonLines = options.jsonLines;
    recording.progress = options.progress;
    recording.allocatorBytes = [memory = DeviceMemory(m_device)] { return memory.inUseAndPeakBytes(); };
    recording.diagnostics = m_config.diagnostics;
    StudyRecorder recorder(store, result.runId, m_config.train.steps, recording);
    recorder.started(startMessage(m_config, m_data, m_threads, m_device));

    TrainingOutcome &outcome = result.outcome;
    try {
        Trainer trainer(m_config, m_data, uint64_t(store.studySeed()));
        outcome = trainer.run(recorder, stopRequested);
    } catch (const std::exception &e) {
        // Building the model or its optimizer can already exceed a budget.
        const auto refusal = allocator.refusal();
        outcome.outcome = refusal ? Outcome::Oom : Outcome::Failed;
        outcome.message = refusal ? MemoryBudgetExceeded(*refusal).what() : e.what();
        outcome.refusal = refusal;
        allocator.setBudget(0);
    }
    if (outcome.refusal)
        recorder.event(EventKind::Oom, refusalMessage(*outcome.refusal, outcome.step));
    std::vector<MemoryRow> memory = predicted;
    memory.insert(memory.end(), outcome.measuredMemory.begin(), outcome.measuredMemory.end());
    store.replaceMemory(result.runId, memory);
    if (!outcome.dtypes.empty())
        store.setDtypes(result.runId, nlohmann::json(outcome.dtypes).dump());
    recorder.finished(outcome.outcome, outcome.step, outcome.message);
    return result;
}

} // namespace optlog
