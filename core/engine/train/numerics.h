// SPDX-License-Identifier: MIT
#pragma once

#include "core/contract/measurements.h"

#include <ATen/core/Tensor.h>

namespace torch::optim {
struct AdamWOptions;
struct AdamWParamState;
} // namespace torch::optim

namespace optlog {

// What FP16 and BF16 would do to a run's own tensors, measured in FP32 on any device: the
// reason FP16 needs a loss scaler and pure BF16 needs master weights, from the user's model.

inline constexpr double kFp16SmallestSubnormal = 0x1p-24; // below it FP16 rounds to zero
inline constexpr double kFp16SmallestNormal = 0x1p-14;    // below it FP16 keeps fewer bits
// A scaler's scale is capped here: one with nothing to limit it only grows this far in practice.
inline constexpr double kLargestLossScale = 0x1p24;

// The largest power of two S with maxAbs · S <= 65504, capped at kLargestLossScale: about where
// a dynamic loss scaler settles for a gradient whose largest magnitude is `maxAbs`.
double dynamicLossScale(double maxAbs);

// One gradient's fractions, of all its elements: nonzero and below 2^-24 (lost in FP16),
// from 2^-24 up to 2^-14 (subnormal in FP16), and nonzero but below 2^-24 once multiplied by
// `lossScale` (lost even with that scaler). Elements that are zero already count in none.
TensorNumerics gradientNumerics(const at::Tensor &gradient, double lossScale);

// The fraction of `update`'s elements smaller in magnitude than half a BF16 ulp of the
// matching element of `weight`: added to that weight in BF16 they round away. Zero weights,
// which any update changes, count as not vanishing.
double vanishingUpdateFraction(const at::Tensor &weight, const at::Tensor &update);

// The update AdamW applied at its last step to `weight` (FP32): the decoupled weight decay plus
// the bias-corrected moment ratio, from the optimizer's own state and options.
at::Tensor adamwUpdate(const at::Tensor &weight, const torch::optim::AdamWParamState &state,
                       const torch::optim::AdamWOptions &options);

} // namespace optlog
