// SPDX-License-Identifier: MIT
#include "core/engine/trainer.h"

#include "core/engine/countingallocator.h"

#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/adamw.h>
#include <torch/utils.h>

#include <sys/resource.h>

#include <chrono>
#include <cmath>

namespace optlog {

namespace {

using Clock = std::chrono::steady_clock;

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

int64_t peakRssBytes()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return int64_t(usage.ru_maxrss) * 1024; // Linux reports kibibytes
}

} // namespace

std::string dtypeName(const at::Tensor &tensor)
{
    switch (tensor.scalar_type()) {
    case at::kFloat: return "float32";
    case at::kBFloat16: return "bfloat16";
    case at::kHalf: return "float16";
    case at::kDouble: return "float64";
    case at::kLong: return "int64";
    default: return c10::toString(tensor.scalar_type());
    }
}

at::Tensor accumulateGradients(GPT &model, const std::vector<Batch> &microbatches, int64_t *savedActivationBytes)
{
    for (auto &p : model->parameters())
        if (p.grad().defined())
            p.grad().zero_();
    const double share = 1.0 / double(microbatches.size());
    at::Tensor total = torch::zeros({});
    for (size_t i = 0; i < microbatches.size(); ++i) {
        const int64_t before = CountingAllocator::instance().currentBytes();
        at::Tensor loss = model->loss(microbatches[i].inputs, microbatches[i].targets);
        if (savedActivationBytes && i == 0)
            *savedActivationBytes = CountingAllocator::instance().currentBytes() - before;
        (loss * share).backward();
        total += loss.detach() * share;
    }
    return total;
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

Trainer::Trainer(const RunConfig &config, TokenSplit data, uint64_t studySeed)
    : m_config(config)
    , m_data(std::move(data))
{
    torch::manual_seed(uint64_t(config.train.seed));
    m_model = GPT(GPTOptions::from(config.model));
    m_model->train();

    // Decay matrices and embeddings, not biases and LayerNorm gains (GPT-2, nanoGPT).
    std::vector<at::Tensor> decayed, plain;
    for (const auto &p : m_model->parameters())
        (p.dim() >= 2 ? decayed : plain).push_back(p);
    const auto &t = config.train;
    auto options = torch::optim::AdamWOptions(t.learningRate).betas({t.beta1, t.beta2}).eps(t.eps);
    std::vector<torch::optim::OptimizerParamGroup> groups;
    groups.emplace_back(decayed, std::make_unique<torch::optim::AdamWOptions>(
                                     torch::optim::AdamWOptions(options).weight_decay(t.weightDecay)));
    groups.emplace_back(plain, std::make_unique<torch::optim::AdamWOptions>(
                                   torch::optim::AdamWOptions(options).weight_decay(0.0)));
    m_optimizer = std::make_unique<torch::optim::AdamW>(std::move(groups), options);

    m_validationBatches = validationBatches(m_data.validation, config.model.contextLength, config.data.evalSequences,
                                            config.train.microbatch, studySeed);
}

Trainer::~Trainer() = default;

double Trainer::validate()
{
    torch::NoGradGuard noGrad;
    m_model->eval();
    double sum = 0;
    int64_t sequences = 0;
    for (const auto &batch : m_validationBatches) {
        sum += m_model->loss(batch.inputs, batch.targets).item<double>() * double(batch.inputs.size(0));
        sequences += batch.inputs.size(0);
    }
    m_model->train();
    return sum / double(sequences);
}

TrainingOutcome Trainer::run(TrainingObserver &observer, const std::atomic<bool> &stopRequested)
{
    const auto &train = m_config.train;
    const int64_t tokensPerStep = m_config.tokensPerStep();
    BatchSampler sampler(m_data.train, m_config.model.contextLength, uint64_t(train.seed));
    auto &allocator = CountingAllocator::instance();
    const double clip = train.gradClip > 0 ? train.gradClip : INFINITY;

    TrainingOutcome outcome;
    int64_t savedActivationBytes = -1;
    for (int64_t step = 0; step < train.steps; ++step) {
        if (stopRequested.load()) {
            outcome.outcome = "cancelled";
            outcome.message = "stopped by a signal after step " + std::to_string(step - 1);
            break;
        }
        // The peak counts complete steps after warm-up: Adam's moments exist from the first step on.
        const bool firstMeasuredStep = step == m_config.memory.warmupSteps;
        if (firstMeasuredStep)
            allocator.resetPeak();

        const auto start = Clock::now();
        const double lr = learningRateAt(train, step);
        for (auto &group : m_optimizer->param_groups())
            static_cast<torch::optim::AdamWOptions &>(group.options()).lr(lr);

        std::vector<Batch> microbatches;
        for (int64_t i = 0; i < train.accumulation; ++i)
            microbatches.push_back(sampler.next(train.microbatch));
        at::Tensor loss = accumulateGradients(m_model, microbatches, firstMeasuredStep ? &savedActivationBytes : nullptr);
        const double gradNorm = torch::nn::utils::clip_grad_norm_(m_model->parameters(), clip);
        m_optimizer->step();
        const double lossValue = loss.item<double>(); // the one host read of the step
        const double seconds = std::chrono::duration<double>(Clock::now() - start).count();

        StepMetrics metrics;
        metrics.step = step;
        metrics.tokens = (step + 1) * tokensPerStep;
        metrics.trainLoss = lossValue;
        metrics.learningRate = lr;
        metrics.gradNorm = gradNorm;
        metrics.stepSeconds = seconds;
        metrics.tokensPerSecond = double(tokensPerStep) / seconds;
        observer.step(metrics);
        outcome.step = step;

        if (!std::isfinite(lossValue)) {
            outcome.outcome = "diverged";
            outcome.message = "training loss became " + std::to_string(lossValue) + " at step " + std::to_string(step);
            break;
        }
        if ((step + 1) % train.evalInterval == 0 || step + 1 == train.steps)
            observer.validated({step, metrics.tokens, validate()});
    }
    outcome.measuredMemory = measureMemory(savedActivationBytes);
    if (savedActivationBytes < 0)
        observer.event("warning", "the run ended during warm-up: its peak memory covers warm-up steps too");
    return outcome;
}

std::vector<MemoryRow> Trainer::measureMemory(int64_t savedActivationBytes) const
{
    std::vector<at::Tensor> parameters = m_model->parameters(), gradients, moments;
    for (const auto &p : parameters)
        gradients.push_back(p.grad());
    for (const auto &entry : m_optimizer->state()) {
        const auto &state = static_cast<const torch::optim::AdamWParamState &>(*entry.second);
        moments.push_back(state.exp_avg());
        moments.push_back(state.exp_avg_sq());
        moments.push_back(state.max_exp_avg_sq());
    }
    const int64_t peak = CountingAllocator::instance().peakBytes();
    std::vector<MemoryRow> rows = {
        {"parameters", dtypeOf(parameters), bytesOf(parameters), "measured"},
        {"gradients", dtypeOf(gradients), bytesOf(gradients), "measured"},
        {"optimizer_state", dtypeOf(moments), bytesOf(moments), "measured"},
    };
    if (savedActivationBytes >= 0) {
        rows.push_back({"saved_activations", dtypeName(parameters.front()), savedActivationBytes, "measured"});
        int64_t persistent = 0;
        for (const auto &row : rows)
            persistent += row.bytes;
        rows.push_back({"temporaries", "mixed", std::max<int64_t>(0, peak - persistent), "measured"});
    }
    rows.push_back({"peak", "mixed", peak, "measured"});
    rows.push_back({"peak_rss", "mixed", peakRssBytes(), "measured"});
    return rows;
}

} // namespace optlog
