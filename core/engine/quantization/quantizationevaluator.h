// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"
#include "core/contract/measurements.h"
#include "core/engine/data/textdata.h"
#include "core/engine/model/languagemodel.h"
#include "core/engine/quantization/quantize.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace optlog {

// What `optlog quantize` asks of one run's final weights.
struct QuantizationRequest
{
    std::string scheme;               // int8 | int4 | int4-asym | nf4 | mixed
    int64_t groupSize = 64;           // 4-bit schemes (and mixed's int4); int8 has one scale per row
    std::string tensors = "blocks.*"; // comma-separated glob patterns over the names of the 2-D weights
    int64_t int8Tensors = 2;          // mixed: the most sensitive tensors kept in int8, the rest int4

    static constexpr const char *kMixed = "mixed";
};

// One run's final weights, loaded on the CPU into an FP32 model, and the study's validation windows
// with the unquantized model's predictions on them. Each quantization is evaluated against those:
// validation loss, the KL divergence of the next-token distribution from the unquantized model's,
// top-1 agreement, and each tensor's sensitivity (its loss when it alone is quantized). Every
// evaluation computes in FP32, the unquantized one too, so that the differences are quantization's.
class QuantizationEvaluator
{
public:
    // `weightsPath` must have been checked against what the study recorded (verifyWeightFile).
    QuantizationEvaluator(const RunConfig &config, const std::string &weightsPath, uint64_t validationSeed);

    // Refuses with ConfigError, naming what would be right, an unknown scheme, a pattern that names
    // no 2-D weight, a group that is not a power of two or does not fit a tensor's rows, a negative
    // int8 count. Computes nothing.
    void check(const QuantizationRequest &request) const;
    // The scheme part of check(), which needs no weights.
    static void checkScheme(const std::string &scheme);
    QuantizationResult evaluate(const QuantizationRequest &request);

    double baseLoss() const { return m_baseLoss; }
    const std::string &floatDtype() const { return m_floatDtype; }

private:
    struct Quality
    {
        double loss = 0, kl = 0, top1 = 0;
    };
    // The model with each named tensor replaced by its quantization, evaluated, then restored.
    Quality qualityWith(const std::map<std::string, QuantizedTensor> &quantized);
    std::vector<std::string> selected(const std::string &patterns) const; // 2-D weights, in model order
    // Each tensor's validation loss when it alone is quantized with `scheme`, minus the unquantized.
    std::vector<TensorSensitivity> sensitivity(const std::vector<std::string> &names, QuantScheme scheme,
                                               int64_t groupSize);

    std::shared_ptr<LanguageModel> m_model;
    std::map<std::string, at::Tensor> m_parameters; // the model's, by name
    std::map<std::string, at::Tensor> m_original;   // FP32 copies, to restore
    std::vector<std::string> m_order;               // parameter names in model order
    std::string m_floatDtype;                       // of the weights as the run kept them
    int64_t m_floatElementBytes = 4;
    std::vector<Batch> m_batches;
    std::vector<at::Tensor> m_baseLogProbs; // per batch, (B, T, V)
    double m_baseLoss = 0;
};

} // namespace optlog
