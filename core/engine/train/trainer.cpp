// SPDX-License-Identifier: MIT
#include "core/engine/train/trainer.h"

#include "core/contract/precisionmodes.h"
#include "core/engine/compat/torchcompat.h"
#include "core/engine/kernels/fusedadamw.h"
#include "core/engine/machine/device.h"
#include "core/engine/memory/countingallocator.h"
#include "core/engine/train/ending.h"
#include "core/engine/train/speedprobe.h"
#include "core/engine/train/steptimer.h"

#include <ATen/record_function.h>
#include <torch/optim/adamw.h>
#include <torch/utils.h>

#include <cmath>

#include <sys/resource.h>

namespace optlog {

namespace {

int64_t bytesOf(const std::vector<at::Tensor> &tensors)
{
    int64_t bytes = 0;
    for (const auto &t : tensors)
        if (t.defined())
            bytes += int64_t(t.nbytes());
    return bytes;
}

std::string dtypeOf(const std::vector<at::Tensor> &tensors)
{
    std::string name;
    for (const auto &t : tensors) {
        if (!t.defined())
            continue;
        const std::string n = dtypeName(t);
        if (!name.empty() && name != n)
            return "mixed";
        name = n;
    }
    return name;
}

Batch onDevice(const Batch &batch, c10::Device device)
{
    return {batch.inputs.to(device), batch.targets.to(device)};
}

int64_t peakRssBytes()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return int64_t(usage.ru_maxrss) * 1024; // Linux reports kibibytes
}

} // namespace

at::Tensor accumulateGradients(LanguageModel &model, const std::vector<Batch> &microbatches, const PrecisionPlan &plan,
                               const LossScaler *scaler, MemoryMeter *meter)
{
    for (auto &p : model.parameterTensors())
        if (p.grad().defined())
            p.grad().zero_();
    const c10::Device device = microbatches.front().inputs.device();
    const double share = 1.0 / double(microbatches.size());
    at::Tensor total = torch::zeros({}, at::TensorOptions().device(device));
    for (const Batch &microbatch : microbatches) {
        at::Tensor loss;
        if (meter)
            meter->forwardBegins();
        {
            // Forward only: backward runs in the dtypes the forward chose.
            AutocastGuard autocast(device.type(), plan.compute, plan.autocast);
            loss = model.loss(microbatch.inputs, microbatch.targets);
        }
        if (meter)
            meter->forwardEnds();
        const at::Tensor part = loss * share;
        (scaler ? scaler->scale(part) : part).backward();
        total += loss.detach() * share;
    }
    return total;
}

std::optional<double> unscaleAndClip(const std::vector<at::Tensor> &parameters, const LossScaler *scaler, double maxNorm)
{
    if (scaler && !scaler->unscale(parameters))
        return std::nullopt;
    // LibTorch's clip_grad_norm_, its norm and coefficient in its arithmetic, except that
    // it multiplies every gradient by the coefficient clamped to 1 even when that is 1: a read and
    // a write of all gradients for nothing on most steps past the first few.
    compat::GradDisabledGuard noGrad;
    std::vector<at::Tensor> gradients, norms;
    for (const auto &p : parameters)
        if (p.grad().defined()) {
            gradients.push_back(p.grad());
            norms.push_back(p.grad().norm());
        }
    if (gradients.empty())
        return 0.0;
    const at::Tensor total = norms.size() == 1 ? norms.front() : at::stack(norms).norm();
    const at::Tensor coefficient = ((maxNorm > 0 ? maxNorm : INFINITY) / (total + 1e-6)).clamp_max(1.0);
    // The step's one host read, for both: on a GPU each read waits for the queued kernels.
    const at::Tensor read = at::stack({total.to(at::kDouble), coefficient.to(at::kDouble)}).cpu();
    const double norm = read[0].item<double>();
    if (!std::isfinite(norm))
        return std::nullopt;
    if (read[1].item<double>() < 1)
        for (auto &g : gradients)
            g.mul_(coefficient);
    return norm;
}

std::optional<double> stepUnlessNonFinite(torch::optim::Optimizer &optimizer, const std::vector<at::Tensor> &tensors,
                                          LossScaler *scaler, double maxNorm, const GradientClip &clip)
{
    const std::optional<double> norm = clip(tensors, scaler, maxNorm);
    if (norm)
        optimizer.step();
    if (scaler)
        scaler->update(!norm);
    return norm;
}

std::unique_ptr<torch::optim::AdamW> makeAdamW(const std::vector<at::Tensor> &decayed,
                                               const std::vector<at::Tensor> &plain, const TrainConfig &train,
                                               bool libtorchStep)
{
    const auto options = torch::optim::AdamWOptions(train.learningRate).betas({train.beta1, train.beta2}).eps(train.eps);
    std::vector<torch::optim::OptimizerParamGroup> groups;
    groups.emplace_back(decayed, std::make_unique<torch::optim::AdamWOptions>(
                                     torch::optim::AdamWOptions(options).weight_decay(train.weightDecay)));
    groups.emplace_back(plain, std::make_unique<torch::optim::AdamWOptions>(
                                   torch::optim::AdamWOptions(options).weight_decay(0.0)));
    if (libtorchStep)
        return std::make_unique<torch::optim::AdamW>(std::move(groups), options);
    return std::make_unique<FusedAdamW>(std::move(groups), options);
}

double learningRateAt(const TrainConfig &train, int64_t step)
{
    if (step < train.warmupSteps)
        return train.learningRate * double(step + 1) / double(train.warmupSteps);
    const int64_t decaySteps = std::max<int64_t>(1, train.steps - 1 - train.warmupSteps);
    const double progress = std::min(1.0, double(step - train.warmupSteps) / double(decaySteps));
    const double cosine = 0.5 * (1.0 + std::cos(M_PI * progress));
    return train.minLearningRate + cosine * (train.learningRate - train.minLearningRate);
}

Trainer::Trainer(const RunConfig &config, TokenSplit data, uint64_t studySeed, RankGroup *ranks)
    : m_config(config)
    , m_ranks(ranks)
    , m_plan(precisionPlan(config.precision.mode))
    , m_device(runDevice(config))
    , m_meter(m_device, config.memory.warmupSteps)
    , m_data(std::move(data))
    , m_sampler(m_data.train, config.model.contextLength, uint64_t(config.train.seed))
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
        m_clip = [this](const std::vector<at::Tensor> &tensors, const LossScaler *scaler, double maxNorm) {
            return m_parallel->unscaleAndClip(tensors, scaler, maxNorm);
        };
        // Every rank starts from the same weights; dropout draws a stream of its own on each.
        if (m_ranks->rank() > 0)
            torch::manual_seed(uint64_t(config.train.seed) * 1000003u + uint64_t(m_ranks->rank()));
    }
    if (m_plan.masterWeights && !sharded())
        for (const auto &p : m_parameters)
            m_master.push_back(p.detach().to(torch::kFloat).clone().requires_grad_(true));
    if (m_plan.lossScaling)
        m_scaler.emplace();

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

const std::vector<at::Tensor> &Trainer::optimizedTensors() const
{
    if (sharded())
        return m_parallel->shard();
    return m_plan.masterWeights ? m_master : m_parameters;
}

const std::vector<at::Tensor> &Trainer::masterWeights() const
{
    static const std::vector<at::Tensor> none;
    if (sharded())
        return m_plan.masterWeights ? m_parallel->shard() : none;
    return m_master;
}

std::optional<double> Trainer::optimizerStep()
{
    m_meter.enter("optimizer step");
    RECORD_FUNCTION("optlog::optimizer_step", std::vector<c10::IValue>()); // a profile's scope (bench_profile)
    LossScaler *scaler = m_scaler ? &*m_scaler : nullptr;
    const double maxNorm = m_config.train.gradClip;
    if (sharded()) {
        const std::optional<double> norm = stepUnlessNonFinite(*m_optimizer, optimizedTensors(), scaler, maxNorm,
                                                               m_clip);
        if (norm)
            m_parallel->gatherParameters();
        m_parallel->releaseShardGradients();
        return norm;
    }
    if (m_plan.masterWeights) {
        // FP32 gradients for the master copies exist only during the optimizer step, so the
        // persistent layout stays 16-bit weights and gradients + FP32 master weights and moments.
        for (size_t i = 0; i < m_master.size(); ++i)
            m_master[i].mutable_grad() = m_parameters[i].grad().to(torch::kFloat);
    }
    const std::optional<double> norm = stepUnlessNonFinite(*m_optimizer, optimizedTensors(), scaler, maxNorm, m_clip);
    if (norm && m_plan.masterWeights) {
        compat::GradDisabledGuard noGrad;
        for (size_t i = 0; i < m_master.size(); ++i)
            m_parameters[i].copy_(m_master[i]);
    }
    for (auto &master : m_master)
        master.mutable_grad() = at::Tensor();
    return norm;
}

std::vector<at::Tensor> Trainer::gradients() const
{
    if (m_parallel)
        return m_parallel->keptGradients();
    std::vector<at::Tensor> out;
    for (const auto &p : m_parameters)
        out.push_back(p.grad());
    return out;
}

std::vector<at::Tensor> Trainer::moments() const
{
    std::vector<at::Tensor> out;
    for (const auto &entry : m_optimizer->state()) {
        const auto &state = static_cast<const torch::optim::AdamWParamState &>(*entry.second);
        out.push_back(state.exp_avg());
        out.push_back(state.exp_avg_sq());
    }
    return out;
}

std::map<std::string, std::string> Trainer::dtypes()
{
    std::string compute;
    {
        compat::GradDisabledGuard noGrad;
        AutocastGuard autocast(m_device.type(), m_plan.compute, m_plan.autocast);
        compute = dtypeName(m_model->logitsOf(m_validationBatches.front().inputs.slice(0, 0, 1)));
    }
    return {{precisionStateKey(PrecisionState::Weights), dtypeOf(m_parameters)},
            {precisionStateKey(PrecisionState::Gradients), dtypeOf(gradients())},
            {precisionStateKey(PrecisionState::MasterWeights),
             masterWeights().empty() ? "none" : dtypeOf(masterWeights())},
            {precisionStateKey(PrecisionState::OptimizerState), dtypeOf(moments())},
            {precisionStateKey(PrecisionState::Compute), compute}};
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
    point.loss = losses.mean().item<double>();
    point.sequenceSd = point.sequences > 1 ? losses.std().item<double>() : 0.0;
    return point;
}

TrainingOutcome Trainer::run(TrainingObserver &observer, const std::atomic<bool> &stopRequested)
{
    auto &allocator = CountingAllocator::instance();
    TrainingOutcome outcome;
    try {
        outcome = trainSteps(observer, stopRequested);
    } catch (const std::exception &e) {
        outcome = outcomeOfException(e, {m_lastCompletedStep + 1, m_device.str(), {}, {}});
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
    outcome.dtypes = dtypes();
    if (!m_meter.savedActivationBytes())
        observer.event(EventKind::Warning, "the run ended during warm-up: its peak memory covers warm-up steps too");
    return outcome;
}

TrainingOutcome Trainer::trainSteps(TrainingObserver &observer, const std::atomic<bool> &stopRequested)
{
    const auto &train = m_config.train;
    StepTimer timer(m_device, m_firstStep + m_config.memory.warmupSteps);
    SpeedProbe speed(m_config.runtime.speedProbeEvery, m_plan.compute, m_device, m_model->gemmLibrary());
    if (m_firstStep < train.steps)
        speed.loopBegins();
    for (int64_t step = m_firstStep; step < train.steps; ++step) {
        // A stop request ends the run between steps, with a checkpoint to resume from (data
        // parallel: every rank stops at the step one of them was asked to).
        if (m_parallel ? m_stopAgreed : stopRequested.load()) {
            if (m_lastCompletedStep >= 0 && !m_parallel)
                writeWeights(WeightFileKind::Checkpoint, observer);
            return ended(timer, Outcome::Cancelled, m_lastCompletedStep,
                         "stopped by a signal after step " + std::to_string(m_lastCompletedStep));
        }
        m_meter.stepBegins();
        timer.stepBegins();
        const double lr = setLearningRate(step);

        // Forward and backward over the step's microbatches, the gradients accumulated.
        at::Tensor loss = accumulateGradients(*m_model, drawMicrobatches(), m_plan, scaler(), &m_meter);
        m_meter.passesEnd();

        // 16-bit numerics, where the gradients are as backward left them; not the step's time.
        std::vector<TensorNumerics> numerics;
        const bool numericsDue = numericsDueAt(step);
        if (numericsDue)
            timer.exclude([&] { numerics = gradientNumerics(step); });

        // The optimizer step, from every rank's gradients under data parallel.
        if (m_parallel) {
            m_meter.enter("gradient reduction");
            m_parallel->reduceGradients();
        }
        const std::optional<double> gradNorm = optimizerStep();
        // Besides the gradient norm (read by clipping), the step's one host read; on CUDA it also
        // waits for the step's queued kernels.
        double lossValue = loss.item<double>();
        if (m_parallel)
            std::tie(lossValue, m_stopAgreed) = m_parallel->agree(lossValue, stopRequested.load());
        if (numericsDue)
            timer.exclude([&] { addUpdateAndActivationNumerics(numerics); });

        // What the step measured; the machine-speed index outside its time.
        StepMetrics metrics = stepMetrics(step, lossValue, lr, gradNorm, timer.stepSeconds());
        timer.stepEnds(step, metrics.stepSeconds, metrics.communicationSeconds.value_or(0.0));
        metrics.machineGflops = speed.after(step, m_firstStep);
        observer.step(metrics);
        if (!gradNorm && !m_scaler)
            observer.event(EventKind::Warning, skippedStepWarning(step), step);
        if (numericsDue)
            observer.numerics(numerics);
        if (!std::isfinite(lossValue))
            return ended(timer, Outcome::Diverged, step,
                         "training loss became " + std::to_string(lossValue) + " at step " + std::to_string(step));

        // Validation every train.eval_interval steps and at the last; checkpoints between.
        if (validates() && ((step + 1) % train.evalInterval == 0 || step + 1 == train.steps))
            observer.validated(validationAt(step, metrics.tokens));
        m_lastCompletedStep = step;
        if (train.checkpointInterval > 0 && (step + 1) % train.checkpointInterval == 0 && step + 1 < train.steps)
            writeWeights(WeightFileKind::Checkpoint, observer);
    }
    writeWeights(WeightFileKind::Final, observer);
    return ended(timer, Outcome::Completed, m_lastCompletedStep, "");
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
    return m_config.diagnostics.numerics && (step + 1) % m_config.diagnostics.numericsEvery == 0;
}

std::string Trainer::skippedStepWarning(int64_t step) const
{
    return "step " + std::to_string(step) + " skipped its optimizer step: a gradient was inf or NaN ("
           + m_config.precision.mode + " has no loss scaler to back off; the weights are unchanged)";
}

ValidationPoint Trainer::validationAt(int64_t step, int64_t tokens)
{
    ValidationPoint point = validate();
    point.step = step;
    point.tokens = tokens;
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
                                 double seconds) const
{
    const int64_t tokensPerStep = m_config.tokensPerStep();
    StepMetrics metrics;
    metrics.step = step;
    metrics.tokens = (step + 1) * tokensPerStep;
    metrics.trainLoss = loss;
    metrics.learningRate = learningRate;
    metrics.gradNorm = gradNorm.value_or(std::nan(""));
    metrics.stepSeconds = seconds;
    metrics.tokensPerSecond = double(tokensPerStep) / seconds;
    metrics.lossScale = m_scaler ? m_scaler->currentScale() : 0.0;
    metrics.skipped = !gradNorm;
    if (m_ranks)
        metrics.communicationSeconds = m_ranks->takeCollectiveSeconds();
    return metrics;
}

std::vector<MemoryRow> Trainer::measureMemory() const
{
    const std::vector<at::Tensor> &parameters = m_parameters;
    const std::vector<at::Tensor> gradients = this->gradients(), moments = this->moments(); // AdamW without amsgrad
    const int64_t peak = m_meter.peakBytes();
    std::vector<MemoryRow> rows = {
        {MemoryRole::Parameters, dtypeOf(parameters), bytesOf(parameters), MemorySource::Measured},
        {MemoryRole::Gradients, dtypeOf(gradients), bytesOf(gradients), MemorySource::Measured},
        {MemoryRole::OptimizerState, dtypeOf(moments), bytesOf(moments), MemorySource::Measured},
    };
    if (!masterWeights().empty())
        rows.push_back(
            {MemoryRole::MasterWeights, dtypeOf(masterWeights()), bytesOf(masterWeights()), MemorySource::Measured});
    if (m_parallel) {
        const std::vector<at::Tensor> buffers = m_parallel->communicationBuffers();
        rows.push_back({MemoryRole::CommunicationBuffers, dtypeOf(buffers), bytesOf(buffers), MemorySource::Measured});
    }
    if (const auto saved = m_meter.savedActivationBytes()) {
        rows.push_back({MemoryRole::SavedActivations, "mixed", *saved, MemorySource::Measured});
        int64_t persistent = 0;
        for (const auto &row : rows)
            persistent += row.bytes;
        rows.push_back(
            {MemoryRole::Temporaries, "mixed", std::max<int64_t>(0, peak - persistent), MemorySource::Measured});
    }
    rows.push_back({MemoryRole::Peak, "mixed", peak, MemorySource::Measured});
    if (const auto reserved = m_meter.reservedPeakBytes())
        rows.push_back({MemoryRole::PeakReserved, "mixed", *reserved, MemorySource::Measured});
    rows.push_back({MemoryRole::PeakRss, "mixed", peakRssBytes(), MemorySource::Measured});
    return rows;
}

} // namespace optlog
