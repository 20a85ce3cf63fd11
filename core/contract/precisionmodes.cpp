// SPDX-License-Identifier: MIT
#include "core/contract/precisionmodes.h"

#include "core/contract/rowlookup.h"

#include <iterator>
#include <sstream>

namespace optlog {

namespace {

constexpr Dtype F32 = Dtype::Float32, BF16 = Dtype::BFloat16, F16 = Dtype::Float16;

// Each state: its stored key, the precision table's column label, and where a mode keeps its dtype.
struct StateFacts
{
    PrecisionState state;
    const char *key;
    const char *label;
    std::optional<Dtype> (*dtypeIn)(const PrecisionMode &mode);
};

constexpr StateFacts kStates[] = {
    {PrecisionState::Weights, "weights", "weights", [](const PrecisionMode &m) { return std::optional(m.weights); }},
    {PrecisionState::Gradients, "gradients", "gradients",
     [](const PrecisionMode &m) { return std::optional(m.gradients); }},
    {PrecisionState::MasterWeights, "master_weights", "master weights",
     [](const PrecisionMode &m) { return m.masterWeights; }},
    {PrecisionState::OptimizerState, "optimizer_state", "Adam m, v",
     [](const PrecisionMode &m) { return std::optional(m.optimizerState); }},
    {PrecisionState::Compute, "compute", "compute", [](const PrecisionMode &m) { return std::optional(m.compute); }},
};

const StateFacts &factsOf(PrecisionState state)
{
    return rowOf(kStates, &StateFacts::state, state);
}

std::string computeText(const PrecisionMode &mode)
{
    const std::string compute = shortDtypeName(mode.compute);
    if (!mode.autocast)
        return compute;
    return compute + " for matmul-class ops, " + shortDtypeName(mode.weights) + " for the rest";
}

std::string bytesText(const PrecisionMode &mode)
{
    std::string sum = std::to_string(dtypeBytes(mode.weights)) + "+" + std::to_string(dtypeBytes(mode.gradients));
    if (mode.masterWeights)
        sum += "+" + std::to_string(dtypeBytes(*mode.masterWeights));
    sum += "+" + std::to_string(2 * dtypeBytes(mode.optimizerState));
    return sum + " = " + std::to_string(mode.modelStateBytesPerParameter());
}

} // namespace

const char *precisionStateKey(PrecisionState state)
{
    return factsOf(state).key;
}
const char *precisionStateLabel(PrecisionState state)
{
    return factsOf(state).label;
}

std::optional<Dtype> PrecisionMode::dtypeOf(PrecisionState state) const
{
    return factsOf(state).dtypeIn(*this);
}

int64_t PrecisionMode::modelStateBytesPerParameter() const
{
    return dtypeBytes(weights) + dtypeBytes(gradients) + (masterWeights ? dtypeBytes(*masterWeights) : 0)
           + 2 * dtypeBytes(optimizerState);
}

const std::vector<PrecisionMode> &precisionModes()
{
    // name            weights grads master optimizer compute autocast scaler cudaOnly
    static const std::vector<PrecisionMode> modes = {
        {"fp32", F32, F32, std::nullopt, F32, F32, false, false, false},
        {"autocast-bf16", F32, F32, std::nullopt, F32, BF16, true, false, false},
        {"autocast-fp16", F32, F32, std::nullopt, F32, F16, true, true, true},
        {"master-bf16", BF16, BF16, F32, F32, BF16, false, false, false},
        {"master-fp16", F16, F16, F32, F32, F16, false, true, true},
        {"pure-bf16", BF16, BF16, std::nullopt, BF16, BF16, false, false, false},
    };
    return modes;
}

const PrecisionMode *findPrecisionMode(const std::string &name)
{
    for (const auto &mode : precisionModes())
        if (mode.name == name)
            return &mode;
    return nullptr;
}

std::vector<std::string> precisionModeNames()
{
    std::vector<std::string> names;
    for (const auto &mode : precisionModes())
        names.push_back(mode.name);
    return names;
}

std::string precisionTableMarkdown()
{
    std::ostringstream out;
    out << "| `precision.mode` |";
    for (PrecisionState state : kPrecisionStates)
        out << " " << precisionStateLabel(state) << " |";
    out << " model-state bytes/param | device |\n|---|";
    for (size_t i = 0; i < std::size(kPrecisionStates); ++i)
        out << "---|";
    out << "---|---|\n";
    for (const auto &mode : precisionModes()) {
        out << "| `" << mode.name << "`" << (mode.lossScaling ? " (+ dynamic loss scaler)" : "") << " |";
        for (PrecisionState state : kPrecisionStates) {
            const std::optional<Dtype> dtype = mode.dtypeOf(state);
            out << " "
                << (state == PrecisionState::Compute ? computeText(mode)
                    : dtype                          ? shortDtypeName(*dtype)
                                                     : "none")
                << " |";
        }
        out << " " << bytesText(mode) << " | " << (mode.cudaOnly ? "CUDA only: refused on the CPU" : "CPU, CUDA")
            << " |\n";
    }
    return out.str();
}

} // namespace optlog
