// SPDX-License-Identifier: MIT
// The trainer's weights files: the final weights, checkpoints, and resuming from one as if the run
// had never stopped.
#include "core/engine/compat/torchcompat.h"
#include "core/engine/memory/countingallocator.h"
#include "core/engine/model/weightfiles.h"
#include "core/engine/train/trainer.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/optim/adamw.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <filesystem>
#include <mutex>

namespace optlog {

void Trainer::writeWeightsTo(std::string base, std::string folder)
{
    m_weightsBase = std::move(base);
    m_weightsFolder = std::move(folder);
}

namespace {

// The keys of a weights file besides the model's own (Module::save names those).
constexpr const char *kStepKey = "optlog.step";
constexpr const char *kOptimizerKey = "optlog.optimizer";
constexpr const char *kMasterKey = "optlog.master.";
constexpr const char *kScalerKey = "optlog.scaler";
constexpr const char *kRandomKey = "optlog.random";
constexpr const char *kBatchOrderKey = "optlog.batch_order";

} // namespace

void Trainer::writeWeights(WeightFileKind kind, TrainingObserver &observer)
{
    if (m_weightsFolder.empty())
        return;
    CountingAllocator::Uncounted uncounted; // optlog's bookkeeping, not the run's memory
    // The tensors are copied to the host: one wait for the device, whatever the file holds.
    m_syncs.record(SyncPurpose::Weights);
    torch::serialize::OutputArchive archive;
    archive.write(kStepKey, c10::IValue(m_lastCompletedStep));
    if (kind == WeightFileKind::Checkpoint) {
        recordOptimizerState();
        torch::serialize::OutputArchive optimizer;
        m_optimizer->save(optimizer);
        archive.write(kOptimizerKey, optimizer);
        for (size_t i = 0; i < m_master.size(); ++i)
            archive.write(kMasterKey + std::to_string(i), m_master[i]);
        if (m_scaler) {
            const LossScaler::State state = m_scaler->state();
            archive.write(kScalerKey, c10::IValue(std::vector<double>{state.scale, double(state.cleanSteps),
                                                                      double(state.skipped)}));
        }
        at::Generator generator = at::detail::getDefaultCPUGenerator();
        std::lock_guard<std::mutex> lock(generator.mutex());
        archive.write(kRandomKey, generator.get_state());
        archive.write(kBatchOrderKey, c10::IValue(m_sampler.state()));
    }
    const std::string name = kind == WeightFileKind::Final
                                 ? std::string("final.pt")
                                 : "checkpoint-step-" + std::to_string(m_lastCompletedStep) + ".pt";
    const std::string relative = m_weightsFolder + "/" + name;
    WeightFile file = m_model->writeWeights(archive, (std::filesystem::path(m_weightsBase) / relative).string());
    file.kind = kind;
    file.step = m_lastCompletedStep;
    file.path = relative;
    observer.weightsWritten(file);
}

void Trainer::resumeFrom(const std::string &path, const WeightFile &recorded)
{
    torch::serialize::InputArchive archive;
    verifyWeightFile(path, recorded);
    compat::GradDisabledGuard noGrad;
    m_model->readWeights(archive, path);
    try {
        c10::IValue step;
        archive.read(kStepKey, step);
        torch::serialize::InputArchive optimizer;
        archive.read(kOptimizerKey, optimizer);
        m_optimizer->load(optimizer);
        for (size_t i = 0; i < m_master.size(); ++i)
            archive.read(kMasterKey + std::to_string(i), m_master[i]);
        if (m_scaler) {
            c10::IValue scaler;
            archive.read(kScalerKey, scaler);
            const std::vector<double> state = scaler.toDoubleVector();
            m_scaler->restore({state.at(0), int64_t(state.at(1)), int64_t(state.at(2))});
        }
        at::Tensor random;
        archive.read(kRandomKey, random);
        at::Generator generator = at::detail::getDefaultCPUGenerator();
        {
            std::lock_guard<std::mutex> lock(generator.mutex());
            generator.set_state(random);
        }
        c10::IValue batchOrder;
        archive.read(kBatchOrderKey, batchOrder);
        m_sampler.restore(batchOrder.toStringRef());
        m_lastCompletedStep = step.toInt();
        m_firstStep = m_lastCompletedStep + 1;
    } catch (const c10::Error &e) {
        throw DataError("the checkpoint '" + path + "' does not fit this run's config (" + e.what_without_backtrace()
                        + "); it was written by another optlog or for another model");
    }
}

} // namespace optlog
