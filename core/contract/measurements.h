// SPDX-License-Identifier: MIT
#pragma once

#include "core/contract/memoryroles.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

namespace optlog {

// What a run measures, as the engine reports it, the study stores it and every reader shows it.

struct StepMetrics
{
    int64_t step = 0;         // optimizer step, from 0
    int64_t tokens = 0;       // tokens seen after this step
    double trainLoss = 0;     // mean over the step's microbatches, nats per token
    double learningRate = 0;
    double gradNorm = 0;      // global norm before clipping
    double stepSeconds = 0;   // wall time of the whole step, optimizer included
    double tokensPerSecond = 0;
    double lossScale = 0;     // the loss scaler's scale after the step; 0 without a scaler
    bool skipped = false;     // the scaler found an inf or NaN gradient and skipped the step
    double machineGflops = 0; // the reference kernel timed after this step (machine-speed index); 0 = not timed
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
    std::string dtype;  // float32, bfloat16, ...; "mixed" or "" where a role holds several
    int64_t bytes = 0;
    MemorySource source = MemorySource::Measured;
};

inline double ValidationPoint::samplingError() const
{
    return sequences > 1 ? sequenceSd / std::sqrt(double(sequences)) : std::nan("");
}

} // namespace optlog
