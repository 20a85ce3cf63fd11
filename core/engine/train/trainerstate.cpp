// SPDX-License-Identifier: MIT
// The trainer's state as it reports it: the tensors the optimizer steps, their dtypes and the
// memory each role holds.
#include "core/engine/compat/torchcompat.h"
#include "core/engine/train/trainer.h"

#include <torch/optim/adamw.h>

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

int64_t peakRssBytes()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return int64_t(usage.ru_maxrss) * 1024; // Linux reports kibibytes
}

} // namespace

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

void Trainer::recordOptimizerState()
{
    if (auto *fused = dynamic_cast<FusedAdamW *>(m_optimizer.get()))
        fused->recordStepCounts();
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

std::vector<MemoryRow> Trainer::modelStateRows() const
{
    const std::vector<at::Tensor> &parameters = m_parameters;
    const std::vector<at::Tensor> gradients = this->gradients(), moments = this->moments(); // AdamW without amsgrad
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
    return rows;
}

std::map<MemoryRole, int64_t> Trainer::modelStateBytes() const
{
    std::map<MemoryRole, int64_t> bytes;
    for (const MemoryRow &row : modelStateRows())
        bytes[row.role] = row.bytes;
    return bytes;
}

std::vector<MemoryRow> Trainer::measureMemory() const
{
    const int64_t peak = m_meter.peakBytes();
    std::vector<MemoryRow> rows = modelStateRows();
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
