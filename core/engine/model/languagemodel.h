// SPDX-License-Identifier: MIT
#pragma once

#include "core/contract/measurements.h"
#include "core/engine/kernels/gemm.h"

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace torch::serialize {
class OutputArchive;
class InputArchive;
} // namespace torch::serialize

namespace optlog {

struct RunConfig;

using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

// What the trainer trains: optlog's own GPT, or a user's TorchScript module (scriptedmodel.h).
// Both map (B, T) int64 tokens to (B, T, V) logits; the loss and the run's bookkeeping are the
// same for both.
class LanguageModel
{
public:
    virtual ~LanguageModel() = default;

    // (B, T) int64 -> logits (B, T, V), with the run's activation checkpointing.
    virtual at::Tensor logitsOf(const at::Tensor &tokens) = 0;
    // Each block's largest output magnitude over `tokens` (no gradient, no checkpointing): what
    // FP16's range would have to hold. Empty for a model whose blocks optlog cannot see.
    virtual std::vector<double> blockOutputMaxima(const at::Tensor &tokens) = 0;
    // The trained tensors, named as the model names them ("blocks.0.mlp.fc.weight").
    virtual NamedTensors namedParameters() const = 0;
    virtual void setTraining(bool training) = 0;
    // Moves the parameters (and buffers) to `device`, floating ones cast to `dtype`.
    virtual void moveTo(c10::Device device, at::ScalarType dtype) = 0;
    // The paths of its CPU products, for the machine-speed index.
    virtual ProductPaths productPaths() const = 0;

    // Writes the model's weights with `runState` (optlog's keys: step, optimizer, ...) to `path`,
    // atomically (weightfiles.h). Returns the file's bytes and SHA-256.
    virtual WeightFile writeWeights(torch::serialize::OutputArchive &runState, const std::string &path) = 0;
    // The model's weights from a file writeWeights wrote (verifyWeightFile is the caller's);
    // `runState` receives optlog's keys. An unreadable file, or a tensor of another shape or dtype
    // or missing, is a DataError.
    virtual void readWeights(torch::serialize::InputArchive &runState, const std::string &path) = 0;

    // Mean cross-entropy over all B·T positions, nats per token, computed in FP32 whatever the
    // dtype of the logits.
    at::Tensor loss(const at::Tensor &tokens, const at::Tensor &targets);
    // Each sequence's own mean cross-entropy, (B,) in FP32: the spread a validation loss averages.
    at::Tensor sequenceLosses(const at::Tensor &tokens, const at::Tensor &targets);
    std::vector<at::Tensor> parameterTensors() const;
    int64_t parameterElements() const;
};

// The model `config` names: optlog's GPT (initialised from the torch seed set before), or the
// TorchScript module at model.path, checked against its contract.
std::shared_ptr<LanguageModel> makeLanguageModel(const RunConfig &config);

// Whether the model `config` names can take it: a TorchScript module is loaded and its contract's
// forwards run (NotApplicable for a setting it cannot take, InputError for a broken module); optlog's
// GPT takes every config that validates. planRuns' ModuleCheck in the CLI's own process.
void requireModelTakes(const RunConfig &config);

} // namespace optlog
