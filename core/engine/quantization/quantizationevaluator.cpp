// SPDX-License-Identifier: MIT
#include "core/engine/quantization/quantizationevaluator.h"

#include "core/config/configerror.h"
#include "core/engine/compat/torchcompat.h"
#include "core/engine/memory/countingallocator.h"
#include "core/engine/model/weightfiles.h"
#include "core/engine/precision/precision.h"

#include <ATen/ATen.h>
#include <torch/serialize/input-archive.h>
#include <torch/utils.h>

#include <algorithm>

#include <fnmatch.h>

namespace optlog {

namespace {

std::vector<std::string> splitPatterns(const std::string &patterns)
{
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= patterns.size()) {
        const size_t comma = std::min(patterns.find(',', start), patterns.size());
        if (comma > start)
            out.push_back(patterns.substr(start, comma - start));
        start = comma + 1;
    }
    return out;
}

// The allocator's growth while `work` runs: its peak above what was in use before.
template<typename Work>
int64_t measuredBytes(Work &&work)
{
    auto &allocator = CountingAllocator::instance();
    allocator.resetPeak();
    const int64_t before = allocator.currentBytes();
    work();
    return allocator.peakBytes() - before;
}

} // namespace

QuantizationEvaluator::QuantizationEvaluator(const RunConfig &config, const std::string &weightsPath,
                                             uint64_t validationSeed)
{
    const PrecisionPlan plan = precisionPlan(config.precision.mode);
    m_model = makeLanguageModel(config);
    // As the run kept them, so that loading changes no dtype.
    m_model->moveTo(c10::Device(c10::kCPU), plan.weights);
    torch::serialize::InputArchive archive;
    {
        compat::GradDisabledGuard noGrad;
        m_model->readWeights(archive, weightsPath);
    }
    m_floatDtype = dtypeName(plan.weights);
    m_floatElementBytes = int64_t(c10::elementSize(plan.weights));
    m_model->moveTo(c10::Device(c10::kCPU), at::kFloat);
    m_model->setTraining(false);
    for (const auto &[name, tensor] : m_model->namedParameters()) {
        m_order.push_back(name);
        m_parameters[name] = tensor;
        m_original[name] = tensor.detach().clone();
    }

    const TokenSplit data = loadTokens(config.data, config.model.vocabSize, config.model.contextLength);
    m_batches = validationBatches(data.validation, config.model.contextLength, config.data.evalSequences,
                                  config.train.microbatch, validationSeed);
    compat::GradDisabledGuard noGrad;
    double loss = 0;
    int64_t tokens = 0;
    for (const Batch &batch : m_batches) {
        // In FP64: int8's KL is near 1e-6 nats, below what FP32's normalisation can resolve
        // (summed in FP32 it can come out negative).
        const at::Tensor logProbs = at::log_softmax(m_model->logitsOf(batch.inputs).to(at::kDouble), -1);
        loss -= logProbs.gather(-1, batch.targets.unsqueeze(-1)).sum().item<double>();
        tokens += batch.targets.numel();
        m_baseLogProbs.push_back(logProbs);
    }
    m_baseLoss = loss / double(tokens);
}

std::vector<std::string> QuantizationEvaluator::selected(const std::string &patterns) const
{
    std::vector<std::string> names;
    const std::vector<std::string> globs = splitPatterns(patterns);
    for (const std::string &name : m_order)
        if (m_parameters.at(name).dim() == 2 && std::any_of(globs.begin(), globs.end(), [&](const std::string &glob) {
                return fnmatch(glob.c_str(), name.c_str(), 0) == 0;
            }))
            names.push_back(name);
    return names;
}

void QuantizationEvaluator::checkScheme(const std::string &scheme)
{
    if (scheme != QuantizationRequest::kMixed && !quantSchemeNamed(scheme))
        throw ConfigError("unknown scheme '" + scheme
                          + "'; the schemes are int8 (per output channel), int4 (symmetric absmax, per group), "
                            "int4-asym (min-max with a zero point, per group), nf4 (per group) and mixed (int4 but "
                            "the most sensitive tensors in int8)");
}

void QuantizationEvaluator::check(const QuantizationRequest &request) const
{
    checkScheme(request.scheme);
    const bool mixed = request.scheme == QuantizationRequest::kMixed;
    const auto scheme = mixed ? std::optional(QuantScheme::Int4) : quantSchemeNamed(request.scheme);
    if (mixed && request.int8Tensors < 0)
        throw ConfigError("--int8-tensors " + std::to_string(request.int8Tensors) + " is negative; give 0 or more");
    const std::vector<std::string> names = selected(request.tensors);
    if (names.empty()) {
        std::string matrices;
        for (const std::string &name : m_order)
            if (m_parameters.at(name).dim() == 2)
                matrices += (matrices.empty() ? "" : ", ") + name;
        throw ConfigError("--tensors '" + request.tensors + "' names no weight matrix of this model; its matrices are "
                          + matrices);
    }
    for (const std::string &name : names)
        if (const std::string problem = groupProblem(m_parameters.at(name), *scheme, request.groupSize);
            !problem.empty())
            throw ConfigError("cannot quantize " + name + ": " + problem);
}

QuantizationEvaluator::Quality QuantizationEvaluator::qualityWith(const std::map<std::string, QuantizedTensor> &quantized)
{
    compat::GradDisabledGuard noGrad;
    for (const auto &[name, q] : quantized)
        m_parameters.at(name).copy_(dequantize(q));
    double loss = 0, kl = 0, agree = 0;
    int64_t tokens = 0;
    for (size_t i = 0; i < m_batches.size(); ++i) {
        const Batch &batch = m_batches[i];
        const at::Tensor logProbs = at::log_softmax(m_model->logitsOf(batch.inputs).to(at::kDouble), -1);
        const at::Tensor &base = m_baseLogProbs[i];
        loss -= logProbs.gather(-1, batch.targets.unsqueeze(-1)).sum().item<double>();
        kl += (base.exp() * (base - logProbs)).sum().item<double>();
        agree += base.argmax(-1).eq(logProbs.argmax(-1)).sum().item<double>();
        tokens += batch.targets.numel();
    }
    for (const auto &[name, q] : quantized)
        m_parameters.at(name).copy_(m_original.at(name));
    return {loss / double(tokens), kl / double(tokens), agree / double(tokens)};
}

std::vector<TensorSensitivity> QuantizationEvaluator::sensitivity(const std::vector<std::string> &names,
                                                                  QuantScheme scheme, int64_t groupSize)
{
    std::vector<TensorSensitivity> rows;
    for (const std::string &name : names) {
        const Quality alone = qualityWith({{name, quantizeWeight(m_original.at(name), scheme, groupSize)}});
        rows.push_back({name, alone.loss - m_baseLoss});
    }
    std::stable_sort(rows.begin(), rows.end(),
                     [](const TensorSensitivity &a, const TensorSensitivity &b) { return a.lossDelta > b.lossDelta; });
    return rows;
}

QuantizationResult QuantizationEvaluator::evaluate(const QuantizationRequest &request)
{
    check(request);
    const bool mixed = request.scheme == QuantizationRequest::kMixed;
    const QuantScheme scheme = mixed ? QuantScheme::Int4 : *quantSchemeNamed(request.scheme);
    const std::vector<std::string> names = selected(request.tensors);

    QuantizationResult result;
    result.scheme = request.scheme;
    result.groupSize = isFourBit(scheme) ? request.groupSize : 0;
    result.tensors = request.tensors;
    result.baseLoss = m_baseLoss;
    result.sensitivity = sensitivity(names, scheme, request.groupSize);

    std::map<std::string, QuantScheme> schemes;
    for (const std::string &name : names)
        schemes[name] = scheme;
    if (mixed)
        for (size_t i = 0; i < result.sensitivity.size() && int64_t(i) < request.int8Tensors; ++i) {
            schemes[result.sensitivity[i].tensor] = QuantScheme::Int8;
            result.int8Tensors += (result.int8Tensors.empty() ? "" : ",") + result.sensitivity[i].tensor;
        }

    std::map<std::string, QuantizedTensor> quantized;
    for (const auto &[name, tensorScheme] : schemes) {
        QuantizedTensor q = quantizeWeight(m_original.at(name), tensorScheme, request.groupSize);
        result.codeBytes += q.codeBytes();
        result.scaleBytes += q.scaleBytes();
        result.zeroPointBytes += q.zeroPointBytes();
        result.quantizedWeights += m_original.at(name).numel();
        // What a kernel that dequantizes one matrix at a time holds besides the packed weights.
        result.workspaceBytes = std::max(result.workspaceBytes, measuredBytes([&] { dequantize(q); }));
        quantized.emplace(name, std::move(q));
    }
    for (const std::string &name : m_order) {
        const int64_t elements = m_original.at(name).numel();
        result.totalWeights += elements;
        if (!quantized.count(name))
            result.floatBytes += elements * m_floatElementBytes;
    }
    result.floatDtype = m_floatDtype;

    const Quality quality = qualityWith(quantized);
    result.loss = quality.loss;
    result.kl = quality.kl;
    result.top1Agreement = quality.top1;
    {
        // One inference forward over a validation batch, without autograd: the activations' bill.
        compat::GradDisabledGuard noGrad;
        const at::Tensor inputs = m_batches.front().inputs;
        result.activationBytes = measuredBytes([&] { m_model->logitsOf(inputs); });
    }
    return result;
}

} // namespace optlog
