// SPDX-License-Identifier: MIT
#include "core/engine/model/scriptedmodel.h"

#include "core/config/config.h"
#include "core/config/configerror.h"
#include "core/contract/inputerror.h"
#include "core/engine/compat/torchcompat.h"
#include "core/engine/data/textdata.h"
#include "core/engine/machine/device.h"
#include "core/engine/machine/steptimeline.h"
#include "core/engine/model/recompute.h"
#include "core/engine/model/weightfiles.h"
#include "core/engine/precision/precision.h"

#include <c10/util/Exception.h>
#include <torch/csrc/autograd/grad_mode.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/csrc/jit/serialization/import.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <filesystem>
#include <sstream>
#include <string_view>

namespace optlog {

namespace {

// The extra file of a weights file that holds optlog's keys (step, optimizer, ...), beside the
// module's own code and tensors.
constexpr const char *kRunStateFile = "optlog/run_state.pt";

std::string shapeOf(const at::Tensor &t)
{
    return c10::str(t.sizes());
}

} // namespace

std::string torchErrorLine(const std::string &text)
{
    constexpr std::string_view kInterpreter = "The following operation failed in the TorchScript interpreter.";
    if (text.rfind(kInterpreter, 0) == 0) {
        std::string_view rest(text);
        while (!rest.empty() && (rest.back() == '\n' || rest.back() == ' '))
            rest.remove_suffix(1);
        if (const size_t start = rest.rfind('\n'); start != std::string_view::npos)
            return std::string(rest.substr(start + 1));
    }
    return text.substr(0, text.find('\n'));
}

ScriptedModel::ScriptedModel(const RunConfig &config)
    : m_path(config.model.path)
    , m_checkpointEvery(config.memory.checkpointEvery)
{
    // The graph as written, each op through the dispatcher where C++ autocast casts it: the graph
    // executor's optimising passes (profiling, fusion, the JIT's own autocast pass) rewrite it
    // after its first runs. On LibTorch 1.13's CPU they left autocast's casts in place, but ran
    // about 10% slower and kept more memory under autocast (docs/torchscript.md).
    torch::jit::setGraphExecutorOptimize(false);
    std::error_code error;
    if (!std::filesystem::is_regular_file(m_path, error))
        throw InputError("model.path = \"" + m_path
                         + "\": no such file; expected the file torch.jit.save wrote of the model");
    m_sha256 = sha256OfFile(m_path);
    try {
        m_module = torch::jit::load(m_path, c10::Device(c10::kCPU));
    } catch (const std::exception &e) {
        throw InputError("model.path = \"" + m_path + "\" is not a TorchScript file LibTorch can load ("
                         + torchErrorLine(e.what())
                         + "); expected what torch.jit.save(torch.jit.script(model), path) writes, whole");
    }
    checkContract(config);
}

void ScriptedModel::checkContract(const RunConfig &config)
{
    const std::string where = "the TorchScript module '" + m_path + "'";
    checkForward(where);
    checkParameters(where);
    compat::GradDisabledGuard noGrad;
    m_module.eval();
    // A batch of two sequences at the run's context, in FP32 on the CPU.
    const int64_t T = config.model.contextLength, V = config.model.vocabSize;
    const at::Tensor tokens = at::arange(2 * T, at::kLong).remainder(V).view({2, T});
    const at::Tensor logits = checkLogits(config, where, tokens);
    checkBlocks(where, tokens, logits);
    checkOnRunDevice(config, where, tokens);
    m_module.train();
}

// forward(idx) with one tensor argument.
void ScriptedModel::checkForward(const std::string &where)
{
    const auto forward = m_module.find_method("forward");
    if (!forward)
        throw InputError(where + " has no forward; the contract is forward(idx: Tensor[B, T] int64) -> Tensor[B, T, V]");
    const auto &arguments = forward->function().getSchema().arguments();
    if (arguments.size() != 2 || !arguments[1].type()->isSubtypeOf(*c10::TensorType::get())) {
        std::string got;
        for (size_t i = 1; i < arguments.size(); ++i)
            got += (got.empty() ? "" : ", ") + arguments[i].name() + ": " + arguments[i].type()->annotation_str();
        throw InputError(where + "'s forward takes (" + got
                         + "); the contract is forward(idx: Tensor[B, T] int64) -> Tensor[B, T, V]");
    }
}

// Floating-point, finite FP32 parameters, at least one; they train from here.
void ScriptedModel::checkParameters(const std::string &where)
{
    NamedTensors parameters = namedParameters();
    if (parameters.empty())
        throw InputError(where + " has no parameters: there is nothing to train");
    for (auto &[name, tensor] : parameters) {
        if (!tensor.is_floating_point())
            throw InputError(where + "'s parameter " + name + " is " + c10::toString(tensor.scalar_type())
                             + ": a trained parameter must be a floating-point tensor");
        if (!tensor.isfinite().all().item<bool>())
            throw InputError(where + "'s parameter " + name + " holds inf or NaN: train from finite weights");
        if (tensor.scalar_type() != at::kFloat)
            throw InputError(where + "'s parameter " + name + " is " + c10::toString(tensor.scalar_type())
                             + ": save the module in FP32; precision.mode casts it");
        tensor.requires_grad_(true);
    }
}

// forward's logits for `tokens`: floating point, of shape [B, T, V] with the data's vocabulary.
at::Tensor ScriptedModel::checkLogits(const RunConfig &config, const std::string &where, const at::Tensor &tokens)
{
    const int64_t T = config.model.contextLength, V = config.model.vocabSize;
    at::Tensor logits;
    try {
        logits = callForward(tokens);
    } catch (const InputError &) {
        throw;
    } catch (const std::exception &e) {
        throw InputError(where + "'s forward fails on int64 tokens of shape [2, " + std::to_string(T)
                         + "] (model.context_length = " + std::to_string(T) + "): " + torchErrorLine(e.what()));
    }
    if (logits.dim() == 3 && logits.size(0) == 2 && logits.size(1) == T && logits.size(2) != V)
        throw InputError(where + " has a vocabulary of " + std::to_string(logits.size(2))
                         + " tokens (its logits' last dimension), but the data's is " + std::to_string(V)
                         + " (model.vocab_size): they must be the same");
    if (logits.dim() != 3 || logits.size(0) != 2 || logits.size(1) != T || !logits.is_floating_point())
        throw InputError(where + "'s forward returned " + std::string(c10::toString(logits.scalar_type())) + " "
                         + shapeOf(logits) + " for tokens of shape [2, " + std::to_string(T)
                         + "]; the contract is floating-point logits of shape [B, T, V] = [2, " + std::to_string(T)
                         + ", " + std::to_string(V) + "]");
    return logits;
}

// The optional contract, embed, blocks and head: all three or none, computing forward's logits.
void ScriptedModel::checkBlocks(const std::string &where, const at::Tensor &tokens, const at::Tensor &logits)
{
    const int64_t T = tokens.size(1);
    const bool embed = m_module.find_method("embed").has_value(), head = m_module.find_method("head").has_value();
    const bool blocks = m_module.hasattr("blocks") && m_module.attr("blocks").isModule();
    if (embed || head || blocks) {
        if (!(embed && head && blocks))
            throw InputError(where + " has " + (embed ? "embed " : "") + (blocks ? "blocks " : "")
                             + (head ? "head " : "") + "but not all three: embed(idx), a ModuleList blocks and "
                             + "head(x) go together, so that the blocks can be checkpointed");
        for (auto child : m_module.attr("blocks").toModule().children())
            m_blocks.push_back(child);
        if (m_blocks.empty())
            throw InputError(where + "'s blocks is empty: give it the blocks that embed's output passes through");
        at::Tensor viaBlocks;
        try {
            viaBlocks = throughBlocks(tokens, 0);
        } catch (const std::exception &e) {
            throw InputError(where + ": embed, blocks and head fail on tokens of shape [2, " + std::to_string(T)
                             + "]: " + torchErrorLine(e.what()));
        }
        if (viaBlocks.sizes() != logits.sizes() || !at::allclose(viaBlocks, logits, 1e-4, 1e-5))
            throw InputError(where + ": head(blocks(embed(idx))) gives " + shapeOf(viaBlocks)
                             + (viaBlocks.sizes() == logits.sizes()
                                    ? " logits that differ from forward's by up to "
                                          + std::to_string((viaBlocks - logits).abs().max().item<double>())
                                    : " logits where forward gives " + shapeOf(logits))
                             + ": they must compute the same model, since checkpointing trains through them");
    }
    if (m_checkpointEvery > 0 && m_blocks.empty())
        throw NotApplicable("memory.checkpoint_every",
                            "memory.checkpoint_every = " + std::to_string(m_checkpointEvery) + ": " + where
                                + " has no blocks to checkpoint; give it embed(idx), a ModuleList blocks and head(x) "
                                  "(docs/torchscript.md), or set memory.checkpoint_every = 0");
}

// The same batch on the run's device, in its precision: a module whose code fixes another dtype
// fails here, before the run exists, rather than at its first step.
void ScriptedModel::checkOnRunDevice(const RunConfig &config, const std::string &where, const at::Tensor &tokens)
{
    const PrecisionPlan plan = precisionPlan(config.precision.mode);
    const c10::Device device = runDevice(config);
    moveTo(device, plan.weights);
    try {
        AutocastGuard autocast(device.type(), plan.compute, plan.autocast);
        callForward(tokens.to(device));
    } catch (const std::exception &e) {
        throw InputError(where + "'s forward fails under precision.mode = \"" + config.precision.mode + "\" (weights "
                         + c10::toString(plan.weights) + (plan.autocast ? ", autocast" : "")
                         + "): " + torchErrorLine(e.what()));
    }
}

at::Tensor ScriptedModel::callForward(const at::Tensor &tokens)
{
    const c10::IValue out = m_module.forward({tokens});
    if (!out.isTensor())
        throw InputError("the TorchScript module '" + m_path + "'s forward returned " + out.tagKind()
                         + "; the contract is one Tensor of logits [B, T, V]");
    return out.toTensor();
}

at::Tensor ScriptedModel::throughBlocks(const at::Tensor &tokens, int64_t checkpointEvery)
{
    // The phases of a memory timeline, as optlog's GPT marks them (gpt.cpp).
    at::Tensor x = markBlockBackward(m_module.run_method("embed", tokens).toTensor(), TimelinePhase::kNoBlock);
    for (size_t i = 0; i < m_blocks.size(); ++i) {
        enterPhase(StepPart::Forward, int64_t(i));
        torch::jit::Module block = m_blocks[i];
        if (checkpointEvery > 0 && int64_t(i) % checkpointEvery == 0)
            x = checkpointed([block](
                                 const std::vector<at::Tensor> &in) mutable { return block.forward({in[0]}).toTensor(); },
                             {x});
        else
            x = block.forward({x}).toTensor();
        x = markBlockBackward(x, int64_t(i));
    }
    enterPhase(StepPart::Loss);
    return m_module.run_method("head", x).toTensor();
}

at::Tensor ScriptedModel::logitsOf(const at::Tensor &tokens)
{
    if (m_checkpointEvery > 0)
        return throughBlocks(tokens, m_checkpointEvery);
    // A memory timeline sees its forward and backward whole (steptimeline.h).
    return markBlockBackward(callForward(tokens), TimelinePhase::kNoBlock);
}

std::vector<double> ScriptedModel::blockOutputMaxima(const at::Tensor &tokens)
{
    std::vector<double> maxima;
    if (m_blocks.empty())
        return maxima;
    compat::GradDisabledGuard noGrad;
    at::Tensor x = m_module.run_method("embed", tokens).toTensor();
    for (auto &block : m_blocks) {
        x = block.forward({x}).toTensor();
        maxima.push_back(x.abs().max().item<double>());
    }
    return maxima;
}

NamedTensors ScriptedModel::namedParameters() const
{
    NamedTensors out;
    for (const auto &item : m_module.named_parameters(/*recurse=*/true))
        out.emplace_back(item.name, item.value);
    return out;
}

void ScriptedModel::setTraining(bool training)
{
    m_module.train(training);
}

void ScriptedModel::moveTo(c10::Device device, at::ScalarType dtype)
{
    m_module.to(device, dtype);
}

WeightFile ScriptedModel::writeWeights(torch::serialize::OutputArchive &runState, const std::string &path)
{
    std::ostringstream state;
    runState.save_to(state);
    const torch::jit::ExtraFilesMap extra = {{kRunStateFile, state.str()}};
    return writeAtomically([&](const std::string &temporary) { m_module.save(temporary, extra); }, path);
}

void ScriptedModel::readWeights(torch::serialize::InputArchive &runState, const std::string &path)
{
    torch::jit::ExtraFilesMap extra = {{kRunStateFile, ""}};
    torch::jit::Module saved;
    const c10::Device device = parameterTensors().front().device();
    try {
        saved = torch::jit::load(path, device, extra);
        runState.load_from(extra.at(kRunStateFile).data(), extra.at(kRunStateFile).size());
    } catch (const std::exception &e) {
        throw DataError("the weights file '" + path
                        + "' cannot be read as optlog's TorchScript weights: " + torchErrorLine(e.what()));
    }
    std::map<std::string, at::Tensor> stored;
    for (const auto &item : saved.named_parameters(true))
        stored.emplace(item.name, item.value);
    compat::GradDisabledGuard noGrad;
    for (auto &[name, tensor] : namedParameters()) {
        const auto found = stored.find(name);
        if (found == stored.end() || found->second.sizes() != tensor.sizes()
            || found->second.scalar_type() != tensor.scalar_type())
            throw DataError("the weights file '" + path + "' holds " + name + " as "
                            + (found == stored.end() ? std::string("nothing")
                                                     : std::string(c10::toString(found->second.scalar_type())) + " "
                                                           + shapeOf(found->second))
                            + ", but model.path's module has it as " + c10::toString(tensor.scalar_type()) + " "
                            + shapeOf(tensor) + ": the file and the module do not belong together");
        tensor.copy_(found->second);
    }
}

} // namespace optlog
