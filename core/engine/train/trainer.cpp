// SPDX-License-Identifier: MIT
#include "core/engine/train/trainer.h"

#include "core/contract/precisionmodes.h"
#include "core/engine/compat/torchcompat.h"
#include "core/engine/kernels/fusedadamw.h"
#include "core/engine/machine/device.h"
#include "core/engine/memory/countingallocator.h"
#include "core/engine/train/accumulation.h"
#include "core/engine/train/ending.h"
#include "core/engine/train/speedprobe.h"
#include "core/engine/train/steptimer.h"
#include "core/engine/train/stepvalues.h"

#include <ATen/record_function.h>
#include <torch/optim/adamw.h>
#include <torch/utils.h>

#include <cmath>

namespace optlog {

namespace {

// A GPU's copy from pageable memory waits for the device's queue; from pinned memory, without a
// wait, it is queued behind the step before (the pinned block is kept until the copy is done).
Batch onDevice(const Batch &batch, c10::Device device)
{
    if (!device.is_cuda())
        return batch;
    return {batch.inputs.pin_memory().to(device, /*non_blocking=*/true),
            batch.targets.pin_memory().to(device, /*non_blocking=*/true)};
}

// Steps are numbered from 0: after step `step`, this many are done.
int64_t stepsDoneAfter(int64_t step)
{
    return step + 1;
}

} // namespace

Trainer::Trainer(const RunConfig &config, TokenSplit data, uint64_t studySeed, RankGroup *ranks)
    : m_config(config)
    , m_ranks(ranks)
    , m_plan(precisionPlan(config.precision.mode))
    , m_device(runDevice(config))
    , m_meter(m_device, config.memory.warmupSteps, [this] { return modelStateBytes(); })
    , m_data(std::move(data))
    , m_sampler(m_data.train, config.model.contextLength, uint64_t(config.train.seed))
    , m_tf32(config.precision.tf32)
    , m_syncs(m_device)
{
    torch::manual_seed(uint64_t(config.train.seed));
    m_model = makeLanguageModel(config);
    m_model->setTraining(true);
    // Initialised (or loaded) in FP32 on the CPU, then moved and cast: every mode on every device
    // starts from the same weights, rounded.
    m_model->moveTo(m_device, m_plan.weights);
    for (auto &[name, tensor] : m_model->namedParameters()) {
        m_parameterNames.push_back(name);
        m_parameters.push_back(tensor);
    }
    if (m_ranks) {
        m_parallel = std::make_unique<DataParallel>(*m_ranks, config, m_parameters, m_plan.masterWeights);
        // The ranks agree on the norm and on skipping through collectives read on the host.
        m_gate = [this](const std::vector<at::Tensor> &tensors, const LossScaler *scaler, double maxNorm) {
            m_syncs.record(SyncPurpose::RankAgreement);
            const std::optional<double> norm = m_parallel->unscaleAndClip(tensors, scaler, maxNorm);
            const auto options = at::TensorOptions().dtype(at::kFloat).device(m_device);
            return StepGate{at::full({}, norm.value_or(NAN), options), at::full({}, norm ? 0.0 : 1.0, options),
                            at::ones({}, options)}; // unscaled and clipped already
        };
        // Every rank starts from the same weights; dropout draws a stream of its own on each.
        if (m_ranks->rank() > 0)
            torch::manual_seed(uint64_t(config.train.seed) * 1000003u + uint64_t(m_ranks->rank()));
    }
    if (m_plan.masterWeights && !sharded())
        for (const auto &p : m_parameters)
            m_master.push_back(p.detach().to(torch::kFloat).clone().requires_grad_(true));
    if (m_plan.lossScaling)
        m_scaler.emplace(LossScaler::kInitialScale, LossScaler::kGrowthInterval, LossScaler::kBackoff,
                         LossScaler::kGrowth, m_device);

    // Decay matrices and embeddings, not biases and LayerNorm gains (GPT-2, nanoGPT); ZeRO's
    // flat pieces take their parameter's.
    std::vector<at::Tensor> decayed, plain;
    const std::vector<at::Tensor> &optimized = optimizedTensors();
    const std::vector<int64_t> pieceOf = sharded() ? m_parallel->shardParameters() : std::vector<int64_t>();
    for (size_t i = 0; i < optimized.size(); ++i) {
        const at::Tensor &parameter = sharded() ? m_parameters[size_t(pieceOf[i])] : optimized[i];
        (parameter.dim() >= 2 ? decayed : plain).push_back(optimized[i]);
    }
    m_optimizer = makeAdamW(decayed, plain, config.train);

    for (const auto &batch : validationBatches(m_data.validation, config.model.contextLength, config.data.evalSequences,
                                               config.train.microbatch, studySeed))
        m_validationBatches.push_back(onDevice(batch, m_device));
}

Trainer::~Trainer() = default;

StepGate Trainer::optimizerStep()
{
    RECORD_FUNCTION("optlog::optimizer_step", std::vector<c10::IValue>()); // a profile's scope (bench_profile)
    LossScaler *scaler = m_scaler ? &*m_scaler : nullptr;
    const double maxNorm = m_config.train.gradClip;
    // The gate decides on the unscaled and clipped gradients; the optimizer's update follows it.
    const GradientGate gateThenStep = [this](const std::vector<at::Tensor> &tensors, const LossScaler *s, double max) {
        const StepGate gate = m_gate(tensors, s, max);
        m_meter.enter(StepPart::OptimizerStep);
        return gate;
    };
    if (sharded()) {
        // ZeRO's gate reads on the host (m_gate): a skipped step gathers the unchanged weights.
        m_meter.enter(StepPart::UnscaleAndClip);
        const StepGate gate = stepUnlessNonFinite(*m_optimizer, optimizedTensors(), scaler, maxNorm, m_syncs,
                                                  gateThenStep);
        m_parallel->gatherParameters();
        m_parallel->releaseShardGradients();
        return gate;
    }
    if (m_plan.masterWeights) {
        // FP32 gradients for the master copies exist only during the optimizer step, so the
        // persistent layout stays 16-bit weights and gradients + FP32 master weights and moments.
        m_meter.enter(StepPart::MasterGradients);
        for (size_t i = 0; i < m_master.size(); ++i)
            m_master[i].mutable_grad() = m_parameters[i].grad().to(torch::kFloat);
    }
    m_meter.enter(StepPart::UnscaleAndClip);
    const StepGate gate = stepUnlessNonFinite(*m_optimizer, optimizedTensors(), scaler, maxNorm, m_syncs, gateThenStep);
    if (m_plan.masterWeights) {
        // Also after a skipped step, which left the masters as the weights were rounded from:
        // copying them again changes nothing, and needs no read of whether it was skipped.
        compat::GradDisabledGuard noGrad;
        for (size_t i = 0; i < m_master.size(); ++i)
            m_parameters[i].copy_(m_master[i]);
    }
    for (auto &master : m_master)
        master.mutable_grad() = at::Tensor();
    return gate;
}

ValidationPoint Trainer::validate()
{
    m_meter.enter("validation");
    compat::GradDisabledGuard noGrad;
    m_model->setTraining(false);
    std::vector<at::Tensor> perSequence;
    {
        AutocastGuard autocast(m_device.type(), m_plan.compute, m_plan.autocast);
        for (const auto &batch : m_validationBatches)
            perSequence.push_back(m_model->sequenceLosses(batch.inputs, batch.targets).to(torch::kDouble));
    }
    m_model->setTraining(true);
    const at::Tensor losses = torch::cat(perSequence);
    ValidationPoint point;
    point.sequences = losses.numel();
    const at::Tensor spread = point.sequences > 1 ? losses.std() : at::zeros({}, losses.options());
    const at::Tensor read = m_syncs.read(at::stack({losses.mean(), spread}), SyncPurpose::Validation);
    point.loss = read[0].item<double>();
    point.sequenceSd = read[1].item<double>();
    return point;
}

TrainingOutcome Trainer::run(TrainingObserver &observer, const std::atomic<bool> &stopRequested)
{
    auto &allocator = CountingAllocator::instance();
    StepTimer timer(m_syncs, m_firstStep + m_config.memory.warmupSteps);
    SpeedProbe speed(m_config.runtime.speedProbeEvery, m_plan.compute, m_device, m_model->productPaths(), m_syncs);
    m_stepInProgress = m_firstStep;
    TrainingOutcome outcome;
    try {
        outcome = trainLoop(observer, stopRequested, timer, speed);
    } catch (const std::exception &e) {
        // The steps taken before the failure are recorded (the failure is the step in progress's):
        // their metrics are still on the device. Should that read fail too, the failure stands.
        try {
            reportPendingSteps(observer, timer, speed, stopRequested);
        } catch (const std::exception &) {
        }
        outcome = outcomeOfException(e, {m_stepInProgress, m_device.str(), {}, {}});
        // Out of memory, the run's tensors are whole and are measured below; any other end is the
        // caller's to record (EngineRun), with what only it knows.
        if (outcome.outcome != Outcome::Oom)
            throw;
    }
    m_meter.enter("setup");
    // The budget rehearses training; what follows only reads the tensors, without it.
    allocator.setBudget(0);
    outcome.measuredMemory = measureMemory();
    outcome.passPeakBytes = m_meter.passPeakBytes();
    outcome.firstStepPeakBytes = m_meter.firstStepPeakBytes();
    for (const MemoryTimeline &timeline : m_meter.takeTimelines()) // one the run's end cut short
        observer.memoryTimeline(timeline);
    outcome.dtypes = dtypes();
    outcome.hostSyncs = m_syncs.counts();
    if (!m_meter.savedActivationBytes())
        observer.event(EventKind::Warning, "the run ended during warm-up: its peak memory covers warm-up steps too");
    return outcome;
}

TrainingOutcome Trainer::trainLoop(TrainingObserver &observer, const std::atomic<bool> &stopRequested, StepTimer &timer,
                                   SpeedProbe &speed)
{
    const auto &train = m_config.train;
    if (m_firstStep < train.steps)
        speed.loopBegins(m_firstStep);
    timer.restart();
    bool stopAgreed = false; // data parallel: a rank was asked to stop, agreed at the last read
    for (int64_t step = m_firstStep; step < train.steps; ++step) {
        // A stop request ends the run between steps, with a checkpoint to resume from (data
        // parallel: every rank stops at the step one of them was asked to). The steps not yet
        // read are read first.
        if (m_parallel ? stopAgreed : stopRequested.load()) {
            if (auto diverged = reportPendingSteps(observer, timer, speed, stopRequested).diverged)
                return *diverged;
            if (m_lastCompletedStep >= 0 && !m_parallel)
                writeWeights(WeightFileKind::Checkpoint, observer);
            return ended(timer, Outcome::Cancelled, m_lastCompletedStep,
                         "stopped by a signal after step " + std::to_string(m_lastCompletedStep));
        }
        m_stepInProgress = step;
        m_meter.stepBegins(step);
        PendingStep pending;
        pending.step = step;
        pending.learningRate = setLearningRate(step);

        // Forward and backward over the step's microbatches, the gradients accumulated.
        const at::Tensor loss = accumulateGradients(*m_model, drawMicrobatches(), m_plan, scaler(), &m_meter);
        m_meter.passesEnd();

        // 16-bit numerics, where the gradients are as backward left them; not the step's time.
        const bool numericsDue = numericsDueAt(step);
        if (numericsDue)
            timer.exclude(SyncPurpose::Numerics, [&] {
                m_meter.enter(StepPart::Numerics);
                pending.numerics = gradientNumerics(step);
            });

        // The optimizer step, from every rank's gradients under data parallel; nothing read yet.
        if (m_parallel) {
            m_meter.enter(StepPart::GradientReduction);
            m_parallel->reduceGradients();
        }
        const StepGate gate = optimizerStep();
        if (numericsDue)
            timer.exclude(SyncPurpose::Numerics, [&] {
                recordOptimizerState();
                addUpdateAndActivationNumerics(pending.numerics);
            });
        const at::Tensor scale = m_scaler ? m_scaler->scaleTensor() : at::zeros({}, gate.skip.options());
        pending.values = stepValues(loss, gate, scale);
        m_pending.push_back(std::move(pending));
        m_meter.stepEnds();

        if (!metricsDueAfter(step))
            continue;
        const StepsRead read = reportPendingSteps(observer, timer, speed, stopRequested);
        if (read.diverged)
            return *read.diverged;
        stopAgreed = read.stopAgreed;

        if (validates() && validationDueAfter(step))
            observer.validated(validationAt(step));
        if (checkpointDueAfter(step))
            writeWeights(WeightFileKind::Checkpoint, observer);
        for (const MemoryTimeline &timeline : m_meter.takeTimelines())
            observer.memoryTimeline(timeline);
        timer.restart();
    }
    writeWeights(WeightFileKind::Final, observer);
    return ended(timer, Outcome::Completed, m_lastCompletedStep, "");
}

bool Trainer::validationDueAfter(int64_t step) const
{
    const int64_t stepsDone = stepsDoneAfter(step);
    return stepsDone % m_config.train.evalInterval == 0 || stepsDone == m_config.train.steps;
}

bool Trainer::checkpointDueAfter(int64_t step) const
{
    const int64_t stepsDone = stepsDoneAfter(step), interval = m_config.train.checkpointInterval;
    return interval > 0 && stepsDone % interval == 0 && stepsDone < m_config.train.steps;
}

bool Trainer::metricsDueAfter(int64_t step) const
{
    const int64_t stepsDone = stepsDoneAfter(step);
    return m_parallel || stepsDone % m_config.runtime.metricsEvery == 0 || validationDueAfter(step)
           || checkpointDueAfter(step)
           || stepsDone == m_firstStep + m_config.memory.warmupSteps; // warm-up's time stays out of the measured steps
}

Trainer::StepsRead Trainer::reportPendingSteps(TrainingObserver &observer, StepTimer &timer, SpeedProbe &speed,
                                               const std::atomic<bool> &stopRequested)
{
    StepsRead read;
    if (m_pending.empty())
        return read;
    std::vector<at::Tensor> rows;
    for (const auto &pending : m_pending)
        rows.push_back(pending.values);
    // The one wait of these steps: their metrics together.
    std::vector<StepReading> readings = readingsOf(
        m_syncs.read(at::stack(rows).to(at::kDouble), SyncPurpose::StepMetrics).contiguous());
    const std::vector<PendingStep> steps = std::move(m_pending);
    m_pending.clear();
    // Data parallel (one step a read): the ranks' mean loss and whether one was asked to stop,
    // agreed inside the step's time, as the collectives of its gradients are.
    if (m_parallel)
        for (StepReading &reading : readings) {
            m_syncs.record(SyncPurpose::RankAgreement);
            std::tie(reading.loss, read.stopAgreed) = m_parallel->agree(reading.loss, stopRequested.load());
        }
    const double seconds = timer.intervalSeconds() / double(steps.size());
    for (size_t i = 0; i < steps.size(); ++i) {
        const PendingStep &pending = steps[i];
        const StepReading &reading = readings[i];
        StepMetrics metrics = stepMetrics(pending.step, reading.loss, pending.learningRate,
                                          reading.skipped ? std::nullopt : std::optional<double>(reading.gradientNorm),
                                          reading.lossScale, seconds);
        timer.stepEnds(pending.step, metrics.stepSeconds, metrics.communicationSeconds.value_or(0.0));
        // The machine-speed index: the loop's starting one with its first step, then at the reads.
        if (pending.step == m_firstStep)
            metrics.machineGflops = speed.startingGflops();
        else if (i + 1 == steps.size())
            metrics.machineGflops = speed.after(pending.step);
        observer.step(metrics);
        if (reading.skipped && !m_scaler)
            observer.event(EventKind::Warning, skippedStepWarning(pending.step), pending.step);
        if (!pending.numerics.empty())
            observer.numerics(pending.numerics);
        if (!std::isfinite(reading.loss)) {
            read.diverged = ended(timer, Outcome::Diverged, pending.step,
                                  "training loss became " + std::to_string(reading.loss) + " at step "
                                      + std::to_string(pending.step));
            return read;
        }
        m_lastCompletedStep = pending.step;
    }
    return read;
}

TrainingOutcome Trainer::ended(const StepTimer &timer, Outcome outcome, int64_t step, std::string message) const
{
    TrainingOutcome out;
    out.outcome = outcome;
    out.step = step;
    out.message = std::move(message);
    out.measuredSteps = timer.measuredSteps();
    out.stepSeconds = timer.measuredSeconds();
    out.communicationSeconds = timer.measuredCommunicationSeconds();
    return out;
}

bool Trainer::numericsDueAt(int64_t step) const
{
    return m_config.diagnostics.numerics && stepsDoneAfter(step) % m_config.diagnostics.numericsEvery == 0;
}

std::string Trainer::skippedStepWarning(int64_t step) const
{
    return "step " + std::to_string(step) + " skipped its optimizer step: a gradient was inf or NaN ("
           + m_config.precision.mode + " has no loss scaler to back off; the weights are unchanged)";
}

ValidationPoint Trainer::validationAt(int64_t step)
{
    ValidationPoint point = validate();
    point.step = step;
    point.tokens = stepsDoneAfter(step) * m_config.tokensPerStep();
    return point;
}

double Trainer::setLearningRate(int64_t step)
{
    const double lr = learningRateAt(m_config.train, step);
    for (auto &group : m_optimizer->param_groups())
        static_cast<torch::optim::AdamWOptions &>(group.options()).lr(lr);
    return lr;
}

std::vector<Batch> Trainer::drawMicrobatches()
{
    RECORD_FUNCTION("optlog::data", std::vector<c10::IValue>()); // a profile's scope (bench_profile)
    // Each rank trains on its slice of the step's batch, drawn as one process would draw it.
    const auto &train = m_config.train;
    const int64_t rank = m_ranks ? m_ranks->rank() : 0, ranks = m_config.distributed.ranks;
    std::vector<Batch> microbatches;
    for (int64_t i = 0; i < train.accumulation; ++i)
        microbatches.push_back(
            onDevice(m_sampler.next(ranks * train.microbatch, rank * train.microbatch, train.microbatch), m_device));
    return microbatches;
}

StepMetrics Trainer::stepMetrics(int64_t step, double loss, double learningRate, std::optional<double> gradNorm,
                                 double lossScale, double seconds) const
{
    const int64_t tokensPerStep = m_config.tokensPerStep();
    StepMetrics metrics;
    metrics.step = step;
    metrics.tokens = stepsDoneAfter(step) * tokensPerStep;
    metrics.trainLoss = loss;
    metrics.learningRate = learningRate;
    metrics.gradNorm = gradNorm.value_or(std::nan(""));
    metrics.stepSeconds = seconds;
    metrics.tokensPerSecond = double(tokensPerStep) / seconds;
    metrics.lossScale = lossScale; // 0 without a scaler
    metrics.skipped = !gradNorm;
    if (m_ranks)
        metrics.communicationSeconds = m_ranks->takeCollectiveSeconds();
    return metrics;
}

} // namespace optlog
