// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"
#include "core/contract/engineevents.h"
#include "core/contract/measurements.h"
#include "core/contract/outcome.h"
#include "core/engine/data/textdata.h"
#include "core/engine/distributed/dataparallel.h"
#include "core/engine/kernels/fusedadamw.h"
#include "core/engine/machine/device.h"
#include "core/engine/machine/hostsyncs.h"
#include "core/engine/memory/countingallocator.h"
#include "core/engine/model/languagemodel.h"
#include "core/engine/precision/precision.h"
#include "core/engine/train/memorymeter.h"
#include "core/engine/train/optimizerstep.h"
#include "core/recording/trainingobserver.h"

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace optlog {

class SpeedProbe;
class StepTimer;

// One training run: the loop reads top to bottom, each technique a flag of the config.
class Trainer
{
public:
    // With `ranks` (whose size is distributed.ranks) the trainer is one rank of a data-parallel
    // run: it trains on its slice of each step's batch, and only rank 0 validates.
    Trainer(const RunConfig &config, TokenSplit data, uint64_t studySeed, RankGroup *ranks = nullptr);
    ~Trainer();

    LanguageModel &model() { return *m_model; }
    const LossScaler *scaler() const { return m_scaler ? &*m_scaler : nullptr; }
    // The dtype of each state, read from the tensors themselves, and of the forward's logits.
    std::map<std::string, std::string> dtypes();
    // The loss over the study's fixed validation set, nats per token, with its spread over the
    // sequences; `step` and `tokens` are left to the caller.
    ValidationPoint validate();
    // What FP16 and BF16 would do to the run's tensors (numerics.h), in two parts around the
    // optimizer step. Before it: per parameter, its gradient as backward left it (unscaled,
    // before clipping). After it: AdamW's last update against its weight, added to those rows,
    // and per block a row with its largest output on the first validation batch.
    std::vector<TensorNumerics> gradientNumerics(int64_t step) const;
    void addUpdateAndActivationNumerics(std::vector<TensorNumerics> &rows);
    // Where the run's weights files go: `folder`, relative to `base` (the study's folder), as the
    // study records them. The final weights when the run completes; a checkpoint every
    // train.checkpoint_interval steps and when a stop request ends the run. Without it the trainer
    // writes none (tests, the fit search).
    void writeWeightsTo(std::string base, std::string folder);
    // Continues from a checkpoint of this config, checked against what the study recorded of it:
    // weights, master weights, AdamW's state, the loss scaler, the random generator and the batch
    // order, so that run() goes on at the step after it as if it had never stopped.
    void resumeFrom(const std::string &path, const WeightFile &recorded);
    // Trains until train.steps, a non-finite loss, or `stopRequested` (checked between steps).
    TrainingOutcome run(TrainingObserver &observer, const std::atomic<bool> &stopRequested);

private:
    // The loop of optimizer steps, until train.steps, a non-finite loss or a stop request: how it
    // ended. m_lastCompletedStep follows it, for an end by an exception.
    TrainingOutcome trainLoop(TrainingObserver &observer, const std::atomic<bool> &stopRequested, StepTimer &timer,
                              SpeedProbe &speed);
    // How the loop ended, with the measured steps' timing.
    TrainingOutcome ended(const StepTimer &timer, Outcome outcome, int64_t step, std::string message) const;
    bool numericsDueAt(int64_t step) const; // every diagnostics.numerics_every steps, when on
    std::string skippedStepWarning(int64_t step) const;
    ValidationPoint validationAt(int64_t step);
    // The step's learning rate, set on every parameter group.
    double setLearningRate(int64_t step);
    // This rank's microbatches of the next step, on the run's device.
    std::vector<Batch> drawMicrobatches();
    StepMetrics stepMetrics(int64_t step, double loss, double learningRate, std::optional<double> gradNorm,
                            double lossScale, double seconds) const;
    bool validationDueAfter(int64_t step) const; // every train.eval_interval steps, and the last
    bool checkpointDueAfter(int64_t step) const; // every train.checkpoint_interval steps, before the last
    // Whether the steps taken so far are read now: every runtime.metrics_every steps, at the last,
    // before a validation or checkpoint, and every step under data parallelism (whose ranks agree
    // on the loss and on stopping each step).
    bool metricsDueAfter(int64_t step) const;
    // What a read of the pending steps found: the loop's outcome when one of them diverged, and
    // under data parallelism whether the ranks agreed to stop.
    struct StepsRead
    {
        std::optional<TrainingOutcome> diverged;
        bool stopAgreed = false;
    };
    // Reads the steps taken since the last read in one wait and reports them.
    StepsRead reportPendingSteps(TrainingObserver &observer, StepTimer &timer, SpeedProbe &speed,
                                 const std::atomic<bool> &stopRequested);
    std::vector<MemoryRow> measureMemory() const;
    // The model's states as they are now, by role: what a memory timeline stands on.
    std::vector<MemoryRow> modelStateRows() const;
    std::map<MemoryRole, int64_t> modelStateBytes() const;
    void writeWeights(WeightFileKind kind, TrainingObserver &observer);
    std::vector<at::Tensor> gradients() const; // of the model's parameters
    std::vector<at::Tensor> moments() const;   // AdamW's m and v

    // The tensors AdamW updates: the FP32 master copies, or the model's own parameters.
    const std::vector<at::Tensor> &optimizedTensors() const;
    // The FP32 master weights this rank keeps (under ZeRO its shard's); empty without them.
    const std::vector<at::Tensor> &masterWeights() const;
    bool sharded() const { return m_parallel && m_parallel->zeroStage() > 0; }
    bool validates() const { return !m_ranks || m_ranks->rank() == 0; }
    // One optimizer step from the accumulated gradients: its gate, on the device.
    StepGate optimizerStep();
    // The optimizer's state as the host reads it (its step counts), before saving or reading it.
    void recordOptimizerState();

    // A step taken and not yet read: its metrics stay on the device until metricsDueAfter.
    struct PendingStep
    {
        int64_t step = 0;
        double learningRate = 0;
        at::Tensor values; // stepValues (stepvalues.h): FP32 on the device
        std::vector<TensorNumerics> numerics;
    };

    RunConfig m_config;
    RankGroup *m_ranks = nullptr;
    std::unique_ptr<DataParallel> m_parallel;
    GradientGate m_gate = gradientGate; // over every rank's gradients with m_parallel
    PrecisionPlan m_plan;
    c10::Device m_device;
    MemoryMeter m_meter;
    int64_t m_lastCompletedStep = -1; // the last step whose metrics were read and reported
    int64_t m_stepInProgress = 0;     // from its start to the next step's, validation and checkpoint included
    TokenSplit m_data;
    BatchSampler m_sampler;
    int64_t m_firstStep = 0; // after a resume, the step after the checkpoint
    std::string m_weightsBase, m_weightsFolder;
    std::shared_ptr<LanguageModel> m_model;    // optlog's GPT or the config's TorchScript module
    std::vector<at::Tensor> m_parameters;      // the model's, in their training dtype
    std::vector<std::string> m_parameterNames; // "blocks.0.attention.qkv.weight", as m_parameters
    std::vector<at::Tensor> m_master;          // FP32 copies, when the plan keeps master weights
    std::optional<LossScaler> m_scaler;
    std::unique_ptr<torch::optim::AdamW> m_optimizer;
    std::vector<Batch> m_validationBatches;
    Tf32Guard m_tf32; // precision.tf32 on every rank, for the run's products and its speed probe
    HostSyncs m_syncs;
    std::vector<PendingStep> m_pending;
};

} // namespace optlog
