// SPDX-License-Identifier: MIT
#pragma once

#include "core/contract/memoryroles.h"
#include "core/contract/rowlookup.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace optlog {

// What a run measures, as the engine reports it, the study stores it and every reader shows it.

struct StepMetrics
{
    int64_t step = 0;     // optimizer step, from 0
    int64_t tokens = 0;   // tokens seen after this step
    double trainLoss = 0; // mean over the step's microbatches, nats per token
    double learningRate = 0;
    double gradNorm = 0;    // global norm before clipping
    double stepSeconds = 0; // wall time of the whole step, optimizer included
    double tokensPerSecond = 0;
    double lossScale = 0;     // the loss scaler's scale after the step; 0 without a scaler
    bool skipped = false;     // the scaler found an inf or NaN gradient and skipped the step
    double machineGflops = 0; // the reference kernel timed after this step (machine-speed index); 0 = not timed
    std::optional<double> communicationSeconds; // data parallel: rank 0's seconds in collectives, within stepSeconds
};

struct ValidationPoint
{
    int64_t step = 0;
    int64_t tokens = 0;
    double loss = 0;       // nats per token over the study's fixed validation set
    int64_t sequences = 0; // how many sequences `loss` averages; 0: not recorded (older studies)
    double sequenceSd = 0; // the standard deviation of the sequences' own mean losses

    // The validation set's own sampling error of `loss` (the standard error of a mean over
    // `sequences`): what a different draw of validation windows could move it by. NaN unknown.
    double samplingError() const;
};

inline const double kNotApplicable = std::numeric_limits<double>::quiet_NaN();

inline constexpr double kFp16Largest = 65504; // FP16's largest finite value

// The numerics row of every parameter together, each fraction over all their elements.
inline constexpr const char *kAllParameters = "all parameters";

// What 16-bit formats would do to one tensor at one step, measured on the run's own tensors
// (diagnostics.numerics). NaN where a figure does not apply to the tensor.
struct TensorNumerics
{
    int64_t step = 0;
    // A parameter ("blocks.3.mlp.fc.weight"), a block's activations ("blocks.3"), or kAllParameters.
    std::string tensor;
    // Gradient elements below FP16's smallest subnormal (2^-24): zero in FP16 without a scaler.
    double fp16Underflow = kNotApplicable;
    // Below FP16's smallest normal (2^-14), the zeros included: stored with lost precision.
    double fp16Subnormal = kNotApplicable;
    // Still below 2^-24 after the gradient is multiplied by lossScale.
    double scaledUnderflow = kNotApplicable;
    // The largest power of two the gradient takes without passing FP16's largest, 65504: about
    // where a dynamic loss scaler settles.
    double lossScale = kNotApplicable;
    // AdamW updates smaller than half a BF16 ulp of their weight: lost when added to a BF16 weight.
    double vanishingUpdates = kNotApplicable;
    // A block's largest activation magnitude, against FP16's largest, 65504.
    double activationMax = kNotApplicable;
};

// One role's bytes in one run, predicted or measured.
struct MemoryRow
{
    MemoryRole role = MemoryRole::Peak;
    std::string dtype; // float32, bfloat16, ...; "mixed" or "" where a role holds several
    int64_t bytes = 0;
    MemorySource source = MemorySource::Measured;
};

// A file of a run's weights beside the study: its final weights, or a checkpoint to resume from
// (weights, optimizer state, loss scaler and random state).
enum class WeightFileKind { Final, Checkpoint };

struct WeightFile
{
    WeightFileKind kind = WeightFileKind::Final;
    int64_t step = -1; // the last optimizer step the file holds
    std::string path;  // relative to the study's folder
    int64_t bytes = 0;
    std::string sha256;    // of the whole file, lower-case hex
    std::string writtenAt; // ISO 8601, UTC
};

// As the study stores the kind (weight_files.kind).
inline constexpr Named<WeightFileKind> kWeightFileKinds[] = {{WeightFileKind::Final, "final"},
                                                             {WeightFileKind::Checkpoint, "checkpoint"}};
inline const char *weightFileKindName(WeightFileKind kind)
{
    return nameIn(kWeightFileKinds, kind);
}
inline std::optional<WeightFileKind> weightFileKindNamed(const std::string &name)
{
    return valueNamed(kWeightFileKinds, name);
}

// One tensor's cost in a quantization's sensitivity: the validation loss when it alone is quantized,
// minus the unquantized loss.
struct TensorSensitivity
{
    std::string tensor;
    double lossDelta = 0;
};

// A post-training quantization of a run's final weights, evaluated on the study's validation
// windows. Every byte is counted from the packed tensors themselves.
struct QuantizationResult
{
    std::string scheme;           // int8 | int4 | int4-asym | nf4 | mixed
    int64_t groupSize = 0;        // weights per scale; 0: one scale per output channel (int8)
    std::string tensors;          // the pattern of the tensors it quantized
    std::string int8Tensors;      // mixed: the tensors kept in int8 (comma-separated)
    int64_t quantizedWeights = 0; // elements quantized
    int64_t totalWeights = 0;     // every parameter's elements
    int64_t codeBytes = 0;        // the packed codes (two 4-bit codes per byte)
    int64_t scaleBytes = 0;
    int64_t zeroPointBytes = 0;
    int64_t floatBytes = 0;      // what stays in floating point: embeddings unless quantized, LayerNorm, biases
    std::string floatDtype;      // of those
    int64_t workspaceBytes = 0;  // measured: dequantizing the largest quantized tensor
    int64_t activationBytes = 0; // measured: one inference forward over a validation batch
    double baseLoss = 0;         // validation loss of the unquantized weights
    double loss = 0;             // validation loss of the quantized weights
    double kl = 0;               // mean KL(unquantized || quantized) of the next-token distribution, nats
    double top1Agreement = 0;    // share of positions whose most likely token is unchanged
    std::vector<TensorSensitivity> sensitivity; // largest loss delta first
    std::string createdAt;

    int64_t weightBytes() const { return codeBytes + scaleBytes + zeroPointBytes + floatBytes; }
    int64_t inferenceBytes() const { return weightBytes() + workspaceBytes + activationBytes; }
    double bitsPerWeight() const { return totalWeights ? 8.0 * double(weightBytes()) / double(totalWeights) : 0; }
    double lossDelta() const { return loss - baseLoss; }
};

inline double ValidationPoint::samplingError() const
{
    return sequences > 1 ? sequenceSd / std::sqrt(double(sequences)) : std::nan("");
}

// One rank of a data-parallel run, as rank 0 stored it: where it ran and how its steps went.
// Its memory is stored by role like a run's, under its rank.
struct RankRecord
{
    int64_t rank = 0;
    std::string host;
    int64_t pid = 0;
    std::string environmentJson;
    int64_t measuredSteps = 0;       // the steps after warm-up
    double stepSeconds = 0;          // their wall seconds, summed
    double communicationSeconds = 0; // the part in collectives
    std::string outcome;             // how the rank's training ended: "completed", "failed", ...
    std::string message;
};

// An allocation the memory budget refused: what was asked, what was in use, in which phase.
struct BudgetRefusal
{
    int64_t requestedBytes = 0;
    int64_t inUseBytes = 0;
    int64_t budgetBytes = 0;
    std::string phase; // setup | forward | backward | optimizer step | validation
};

} // namespace optlog
