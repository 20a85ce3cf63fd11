// SPDX-License-Identifier: MIT
#include "core/engine/run/enginerun.h"

#include "core/contract/format.h"
#include "core/contract/machineload.h"
#include "core/contract/thismachine.h"
#include "core/engine/machine/device.h"
#include "core/engine/memory/countingallocator.h"
#include "core/engine/model/gpt.h"
#include "core/engine/precision/precision.h"
#include "core/engine/run/rankrun.h"
#include "core/engine/train/ending.h"
#include "core/memorymodel/memorymodel.h"
#include "core/recording/studyrecorder.h"
#include "core/store/weights.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include <unistd.h>

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

// What the run's products run on, for its environment: each dtype's path and the kernels or ISA
// it reaches here ("gemm"); the compute dtype's apart ("product_path": what `optlog tune` reads,
// and whose matmul peak the run's MFU is measured against); and oneDNN's ISA. Describing ATen's
// BF16 path runs one product.
nlohmann::json productsInUse(ProductPaths paths, at::ScalarType compute, c10::Device device)
{
    if (!device.is_cpu())
        return {{"gemm", "LibTorch's own, on " + describeDevice(device)}};
    return {{"gemm", "float32: " + describePath(paths.float32, at::kFloat)
                         + "; bfloat16: " + describePath(paths.bfloat16, at::kBFloat16)},
            {"product_path",
             {{"dtype", dtypeName(compute)},
              {"path", pathName(paths.of(compute))},
              {"reached", kernelsReached(paths.of(compute), compute)}}},
            {"onednn", describeOneDnn()}};
}

// What the budget refused, as the oom event's message: a JSON object a reader can take apart
// (the step is left out when the run had not taken one).
std::string refusalMessage(const BudgetRefusal &refusal, int64_t step)
{
    nlohmann::json message = {{"phase", refusal.phase},
                              {"requested_bytes", refusal.requestedBytes},
                              {"in_use_bytes", refusal.inUseBytes},
                              {"budget_bytes", refusal.budgetBytes}};
    if (step >= 0)
        message["step"] = step;
    return message.dump();
}

// The machine ran out (std::bad_alloc): what was predicted and what was there, since the
// exception says neither.
std::string outOfMachineMemory(const RunConfig &config, const std::vector<MemoryRow> &predicted,
                               const AvailableMemory &available)
{
    int64_t peak = 0;
    for (const auto &row : predicted)
        if (row.role == MemoryRole::Peak)
            peak = row.bytes;
    return "out of memory: an allocation failed (std::bad_alloc); the prediction was a peak of " + formatBytes(peak)
           + (available.bytes > 0 ? " and the machine had " + formatBytes(available.bytes) + " available at the start"
                                  : std::string())
           + ". Lower train.microbatch" + (config.model.source == ModelSource::Builtin ? " or model.width" : "")
           + ", or set memory.budget to rehearse a limit without reaching "
             "the machine's";
}

} // namespace

EngineRun::EngineRun(RunConfig config, PreflightCheck preflight)
    : m_config(std::move(config))
    , m_device(runDevice(m_config))
    , m_deviceTerms(deviceTermsOf(m_config))
    , m_available(availableMemory())
    , m_data(loadTokens(m_config.data, m_config.model.vocabSize, m_config.model.contextLength))
    , m_check(preflight)
{
    allowAmx(); // before any product (the probes below train), LibTorch's or optlog's, makes oneDNN choose its kernels
    // The prediction first (a TorchScript module's probes, or the memory model's calibration on
    // this device: each cached after its first time), then the check against it.
    if (m_config.model.source == ModelSource::TorchScript)
        m_probed = probeMemory(m_config);
    else
        m_calibration = calibrateDevice(m_config, m_deviceTerms);
    if (preflight == PreflightCheck::Refuse)
        checkMemoryFits(m_config, prediction(), m_available);
}

MemoryEstimate EngineRun::prediction(int64_t rank) const
{
    if (m_probed) {
        MemoryEstimate estimate = probedEstimate(m_config, *m_probed, rank);
        estimate.device = m_deviceTerms;
        return estimate;
    }
    return calibrated(estimateMemory(m_config, m_deviceTerms, rank), *m_calibration);
}

std::vector<MemoryRow> EngineRun::predictedMemory(int64_t rank) const
{
    return prediction(rank).rows();
}

EngineRun::~EngineRun() = default;

void EngineRun::open(const std::string &studyPath)
{
    const bool measurePeak = matmulPeakWanted(); // a bad value is refused before the study exists
    busyShareAllowed();                          // likewise
    const at::ScalarType compute = precisionPlan(m_config.precision.mode).compute;
    // So is a path this CPU lacks; what the products reach is known before the study exists.
    const ProductPaths paths = m_probed ? ProductPaths::aten() : runProductPaths(m_config.runtime, compute);
    m_products = productsInUse(paths, compute, m_device);
    m_heap = keepTensorMemoryInHeap();
    CountingAllocator::install();
    m_threads = applyThreadSettings(m_config.runtime);
    if (measurePeak) {
        // Before the budget, which rehearses the run's memory, not the machine's (the calibration's
        // matrices are not counted in any case).
        // With the rate this run's kernels reach now, which a peak cached at a busier hour falls short
        // of: the better of two machine-speed indexes (the first in a process may find idle threads).
        const Tf32Guard tf32(m_config.precision.tf32); // the rate the run's products will reach
        m_peak = matmulPeak(m_config, m_threads.intraOp, "", 0.15,
                            observed(std::max(referenceKernelGflops(compute, m_device, paths),
                                              referenceKernelGflops(compute, m_device, paths))));
        if (!m_peak.busy.empty())
            std::fprintf(stderr,
                         "optlog: the machine was busy while its matmul peak was measured (%s): this run's MFU is "
                         "judged against it, and it is not kept as the machine's\n",
                         m_peak.busy.c_str());
        m_timeWarning = checkTimeFits(m_config, m_peak.gflops(compute, m_config.precision.tf32, paths.of(compute)),
                                      m_check == PreflightCheck::Force);
    } else {
        m_peak.notMeasured = "OPTLOG_MATMUL_PEAK=0";
    }
    // The study last: every refusal above leaves a new study unmade and an old one as it was.
    m_store = std::make_unique<Store>(studyPath);
    m_studySeed = uint64_t(m_store->studySeed()); // a study edited by hand is refused here, before a run exists
    // Room for the run's outcome should its disk fill: a few pages of the write-ahead log.
    m_store->reserveSpace(64 * 1024);
}

ObservedRate EngineRun::observed(double gflops) const
{
    const at::ScalarType compute = precisionPlan(m_config.precision.mode).compute;
    const ProductPaths paths = m_probed ? ProductPaths::aten() : runProductPaths(m_config.runtime, compute);
    return {compute, gflops, m_config.precision.tf32, paths.of(compute)};
}

void EngineRun::remeasurePeak(int64_t runId, double runGflops)
{
    if (!m_peak.notMeasured.empty())
        return;
    ObservedRate rate = observed(runGflops);
    rate.margin = 1; // any excess: the run's other ops make its rate lower than its products'
    m_peak = matmulPeak(m_config, m_threads.intraOp, "", 0.15, rate);
    nlohmann::json environment = nlohmann::json::parse(m_store->requireRun(runId).environmentJson, nullptr, false);
    if (!environment.is_object())
        return;
    environment["matmul_peak"] = m_peak.toJson();
    environment["matmul_peak"]["after_the_run"] = {{"run_gflops", runGflops}};
    m_store->setEnvironment(runId, environment.dump());
}

nlohmann::json EngineRun::runEnvironment(const MemoryEstimate &predicted) const
{
    nlohmann::json environment = captureEnvironment(m_threads, m_heap);
    environment.update(deviceEnvironment(m_device));
    environment.update(m_products);
    environment["matmul_peak"] = m_peak.toJson();
    environment["tf32"] = m_config.precision.tf32;
    if (!m_probed)
        environment["attention"] = attentionInUse(m_config, m_device, precisionPlan(m_config.precision.mode).compute);
    environment["memory_prediction"] = {{"device_terms", m_deviceTerms.describe()},
                                        {"calibration", predicted.calibration},
                                        {"activations_from", predicted.source}};
    if (m_probed) {
        int64_t parameters = 0;
        for (const int64_t size : m_probed->parameterSizes)
            parameters += size;
        environment["torchscript_model"] = {{"path", m_config.model.path},
                                            {"sha256", m_probed->sha256},
                                            {"parameters", parameters},
                                            {"blocks", m_probed->blocks}};
    }
    return environment;
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
    if (m_resumedRun) {
        result.runId = m_resumedRun;
        store.reopenRun(m_resumedRun, m_checkpoint.step);
    } else {
        result.runId = store.createRun(m_config.name, toToml(m_config), m_config.group, m_origin);
    }
    StudyRecorder::Options recording;
    recording.jsonLines = options.jsonLines;
    recording.progress = options.progress;
    recording.allocatorBytes = [memory = DeviceMemory(m_device)] { return memory.inUseAndPeakBytes(); };
    recording.diagnostics = m_config.diagnostics;
    StudyRecorder recorder(store, result.runId, m_config.train.steps, recording);

    TrainingOutcome &outcome = result.outcome;
    outcome.outcome = Outcome::Failed; // until the trainer says how it ended
    try {
        const std::map<std::string, int64_t> primitivesBefore = primitiveKernelsMade();
        const MemoryEstimate predicted = prediction();
        nlohmann::json environment = runEnvironment(predicted);
        store.setEnvironment(result.runId, environment.dump());
        // The prediction is stored first, so the workbench shows it while the run trains.
        const std::vector<MemoryRow> predictedRows = predicted.rows();
        store.replaceMemory(result.runId, predictedRows);
        for (int64_t rank = 1; m_ranks && rank < m_ranks->size(); ++rank)
            store.replaceMemory(result.runId, predictedMemory(rank), rank);
        recorder.started(startMessage(m_config, m_data, m_threads, m_device)
                         + (m_resumedRun
                                ? "; resumed from the checkpoint after step " + std::to_string(m_checkpoint.step)
                                : std::string()));
        if (m_timeWarning)
            recorder.event(EventKind::Warning, *m_timeWarning);

        outcome = trainOutcome(recorder, result.runId, stopRequested);
        // How often the loop waited for the device, and what the products ran on, now known.
        environment["host_syncs"] = outcome.hostSyncs;
        std::map<std::string, int64_t> made = primitiveKernelsMade(); // less the calibration's, made before
        for (const auto &[kernel, count] : primitivesBefore)
            if ((made[kernel] -= count) == 0)
                made.erase(kernel);
        if (!made.empty())
            environment["matmul_primitives"] = made;
        store.setEnvironment(result.runId, environment.dump());
        if (outcome.refusal)
            recorder.event(EventKind::Oom, refusalMessage(*outcome.refusal, outcome.step));
        std::vector<MemoryRow> memory = predictedRows;
        memory.insert(memory.end(), outcome.measuredMemory.begin(), outcome.measuredMemory.end());
        store.replaceMemory(result.runId, memory);
        if (!outcome.dtypes.empty())
            store.setDtypes(result.runId, nlohmann::json(outcome.dtypes).dump());
        if (m_ranks)
            storeRanks(result.runId, outcome, environment);
    } catch (const StoreError &e) {
        if (outcome.step < 0)
            outcome.step = recorder.lastStep();
        outcome = storeFailure(outcome, e);
        store.releaseSpace();
    }
    outcome = recorder.finished(outcome);
    return result;
}

void EngineRun::resumeFrom(int64_t runId, WeightFile checkpoint)
{
    m_resumedRun = runId;
    m_checkpoint = std::move(checkpoint);
}

TrainingOutcome EngineRun::trainOutcome(StudyRecorder &recorder, int64_t runId, const std::atomic<bool> &stopRequested)
{
    auto &allocator = CountingAllocator::instance();
    TrainingOutcome outcome;
    try {
        if (m_ranks) {
            publishRunForRanks(*m_ranks, m_config, m_studySeed);
            m_ranks->connect(m_device.is_cuda());
        }
        Trainer trainer(m_config, m_data, m_studySeed, m_ranks.get());
        trainer.writeWeightsTo(m_store->absolutePath(""), weightsFolder(*m_store, runId));
        if (m_resumedRun)
            trainer.resumeFrom(m_store->absolutePath(m_checkpoint.path), m_checkpoint);
        outcome = trainer.run(recorder, stopRequested);
    } catch (const StoreError &) {
        allocator.setBudget(0);
        throw;
    } catch (const std::exception &e) {
        // The step that did not complete, as the study has it; -1 before the first.
        const int64_t failedStep = recorder.lastStep() >= 0 ? recorder.lastStep() + 1 : -1;
        outcome = outcomeOfException(e, {failedStep, m_device.str(),
                                         [this] { return outOfMachineMemory(m_config, predictedMemory(), m_available); },
                                         [this] { return m_ranks ? m_ranks->lostRank() : std::string(); }});
        allocator.setBudget(0);
    }
    return outcome;
}

void EngineRun::storeRanks(int64_t runId, const TrainingOutcome &outcome, const nlohmann::json &environment)
{
    RankRecord own;
    own.host = thisMachine();
    own.pid = int64_t(getpid());
    own.environmentJson = environment.dump();
    own.measuredSteps = outcome.measuredSteps;
    own.stepSeconds = outcome.stepSeconds;
    own.communicationSeconds = outcome.communicationSeconds;
    own.outcome = outcomeName(outcome.outcome);
    own.message = outcome.message;
    std::vector<RankRecord> ranks = {own};
    for (int64_t rank = 1; rank < m_ranks->size(); ++rank) {
        RankReport report = readRankReport(*m_ranks, rank, outcome.outcome == Outcome::Completed);
        ranks.push_back(report.record);
        if (!report.measuredMemory.empty()) {
            std::vector<MemoryRow> memory = predictedMemory(rank);
            memory.insert(memory.end(), report.measuredMemory.begin(), report.measuredMemory.end());
            m_store->replaceMemory(runId, memory, rank);
        }
    }
    m_store->storeRanks(runId, ranks);
}

} // namespace optlog
