// SPDX-License-Identifier: MIT
#pragma once

#include "core/config.h"
#include "core/engine/gpt.h"
#include "core/engine/textdata.h"
#include "core/store.h"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

namespace torch::optim {
class AdamW;
}

namespace optlog {

// What the trainer reports while it runs; the recorder writes it to the study.
class TrainingObserver
{
public:
    virtual ~TrainingObserver() = default;
    virtual void step(const StepMetrics &) {}
    virtual void validated(const ValidationPoint &) {}
    virtual void event(const std::string &kind, const std::string &message) {}
};

struct TrainingOutcome
{
    std::string outcome = "completed"; // completed | diverged | cancelled
    int64_t step = -1;                 // last step completed (diverged: the step whose loss was not finite)
    std::string message;
    std::vector<MemoryRow> measuredMemory; // by role, measured on the real tensors and the allocator
};

// Zeroes the gradients, then runs forward and backward on each microbatch with its loss divided
// by the number of microbatches, so the accumulated gradient equals that of one batch of all of
// them. Returns the mean loss as a tensor (no host sync). When `savedActivationBytes` is given,
// the allocator's growth over the first microbatch's forward pass is stored there.
at::Tensor accumulateGradients(GPT &model, const std::vector<Batch> &microbatches,
                               int64_t *savedActivationBytes = nullptr);

// Linear warm-up to the peak, then cosine decay to min_learning_rate at the last step.
double learningRateAt(const TrainConfig &train, int64_t step);

// One training run: the loop reads top to bottom, each technique a flag of the config.
class Trainer
{
public:
    Trainer(const RunConfig &config, TokenSplit data, uint64_t studySeed);
    ~Trainer();

    GPT &model() { return m_model; }
    // Mean validation loss over the study's fixed validation set, nats per token.
    double validate();
    // Trains until train.steps, a non-finite loss, or `stopRequested` (checked between steps).
    TrainingOutcome run(TrainingObserver &observer, const std::atomic<bool> &stopRequested);

private:
    std::vector<MemoryRow> measureMemory(int64_t savedActivationBytes) const;

    RunConfig m_config;
    TokenSplit m_data;
    GPT m_model{nullptr};
    std::unique_ptr<torch::optim::AdamW> m_optimizer;
    std::vector<Batch> m_validationBatches;
};

std::string dtypeName(const at::Tensor &tensor);

} // namespace optlog
