// SPDX-License-Identifier: MIT
#pragma once

#include "core/engine/data/textdata.h"
#include "core/engine/model/languagemodel.h"
#include "core/engine/precision/precision.h"
#include "core/engine/train/memorymeter.h"

#include <vector>

namespace optlog {

// Zeroes the gradients, then runs forward and backward on each microbatch with its loss divided
// by the number of microbatches, so the accumulated gradient equals that of one batch of all of
// them. The forward runs under the plan's autocast; with a scaler the loss is scaled before
// backward. Returns the mean unscaled loss as a tensor (no host sync). Runs on the batches'
// device. A `meter`, when given, is told where each forward begins and ends.
at::Tensor accumulateGradients(LanguageModel &model, const std::vector<Batch> &microbatches,
                               const PrecisionPlan &plan = {}, const LossScaler *scaler = nullptr,
                               MemoryMeter *meter = nullptr);

} // namespace optlog
