// SPDX-License-Identifier: MIT
#pragma once

#include "core/engine/model/languagemodel.h"

#include <torch/csrc/jit/api/module.h>

#include <string>
#include <vector>

namespace optlog {

// A user's own model, written in PyTorch and saved by torch.jit.save, trained by the engine with
// every technique (docs/torchscript.md). Its contract:
//   forward(idx: Tensor[B, T] int64) -> logits Tensor[B, T, V]
// and optionally, together, embed(idx) -> x, a ModuleList `blocks` of x -> x, and head(x) ->
// logits, which must compute forward's logits: through them checkpointing reaches its blocks.
// The line of a LibTorch error that says what went wrong: its first, except for the TorchScript
// interpreter's, whose first line only says that an operation failed and whose last is the error
// the module's code raised.
std::string torchErrorLine(const std::string &text);

class ScriptedModel : public LanguageModel
{
public:
    // Loads model.path and checks it against the contract at the run's vocabulary, context,
    // device and precision. A file or module that breaks it is an InputError that names what is
    // missing and the shapes it got.
    explicit ScriptedModel(const RunConfig &config);

    // The SHA-256 of the module file as it was loaded.
    const std::string &fileSha256() const { return m_sha256; }
    // The blocks of the optional contract; 0 without it.
    int64_t blockCount() const { return int64_t(m_blocks.size()); }

    at::Tensor logitsOf(const at::Tensor &tokens) override;
    std::vector<double> blockOutputMaxima(const at::Tensor &tokens) override;
    NamedTensors namedParameters() const override;
    void setTraining(bool training) override;
    void moveTo(c10::Device device, at::ScalarType dtype) override;
    // Its products are LibTorch's own calls inside the module.
    ProductPaths productPaths() const override { return ProductPaths::aten(); }
    // A TorchScript file that Python's torch.jit.load reads, with optlog's keys in an extra file.
    WeightFile writeWeights(torch::serialize::OutputArchive &runState, const std::string &path) override;
    void readWeights(torch::serialize::InputArchive &runState, const std::string &path) override;

private:
    // Throws InputError (NotApplicable for checkpointing without blocks) naming what breaks the
    // contract of docs/torchscript.md; the steps below, in order.
    void checkContract(const RunConfig &config);
    void checkForward(const std::string &where);
    void checkParameters(const std::string &where);
    at::Tensor checkLogits(const RunConfig &config, const std::string &where, const at::Tensor &tokens);
    void checkBlocks(const std::string &where, const at::Tensor &tokens, const at::Tensor &logits);
    void checkOnRunDevice(const RunConfig &config, const std::string &where, const at::Tensor &tokens);
    at::Tensor callForward(const at::Tensor &tokens);
    at::Tensor throughBlocks(const at::Tensor &tokens, int64_t checkpointEvery);

    std::string m_path;
    std::string m_sha256;
    torch::jit::Module m_module;
    std::vector<torch::jit::Module> m_blocks; // empty without the optional contract
    int64_t m_checkpointEvery = 0;
};

} // namespace optlog
