// SPDX-License-Identifier: MIT
#include "core/engine/model/languagemodel.h"

#include "core/config/config.h"
#include "core/engine/machine/steptimeline.h"
#include "core/engine/model/gpt.h"
#include "core/engine/model/scriptedmodel.h"

#include <torch/nn/functional/loss.h>

namespace optlog {

at::Tensor LanguageModel::loss(const at::Tensor &tokens, const at::Tensor &targets)
{
    const at::Tensor logits = logitsOf(tokens);
    enterPhase(StepPart::Loss); // a memory timeline's (steptimeline.h); optlog's GPT entered it at its head
    return torch::nn::functional::cross_entropy(logits.reshape({-1, logits.size(-1)}).to(at::kFloat),
                                                targets.reshape({-1}));
}

at::Tensor LanguageModel::sequenceLosses(const at::Tensor &tokens, const at::Tensor &targets)
{
    const at::Tensor logits = logitsOf(tokens);
    const at::Tensor perToken
        = torch::nn::functional::cross_entropy(logits.reshape({-1, logits.size(-1)}).to(at::kFloat),
                                               targets.reshape({-1}),
                                               torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone));
    return perToken.view(targets.sizes()).mean(1);
}

std::vector<at::Tensor> LanguageModel::parameterTensors() const
{
    std::vector<at::Tensor> out;
    for (auto &[name, tensor] : namedParameters())
        out.push_back(tensor);
    return out;
}

int64_t LanguageModel::parameterElements() const
{
    int64_t n = 0;
    for (const auto &[name, tensor] : namedParameters())
        n += tensor.numel();
    return n;
}

std::shared_ptr<LanguageModel> makeLanguageModel(const RunConfig &config)
{
    if (config.model.source == ModelSource::TorchScript)
        return std::make_shared<ScriptedModel>(config);
    return GPT(GPTOptions::from(config)).ptr();
}

void requireModelTakes(const RunConfig &config)
{
    if (config.model.source == ModelSource::TorchScript) {
        const ScriptedModel checked(config); // loads it and runs the contract's forwards
    }
}

} // namespace optlog
