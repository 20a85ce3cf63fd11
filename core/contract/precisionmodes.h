// SPDX-License-Identifier: MIT
#pragma once

#include "core/contract/dtype.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace optlog {

// The states a precision mode gives a dtype: the precision table's columns, and the keys of the
// dtypes a run stores as read from its tensors.
enum class PrecisionState { Weights, Gradients, MasterWeights, OptimizerState, Compute };
inline constexpr PrecisionState kPrecisionStates[] = {PrecisionState::Weights, PrecisionState::Gradients,
                                                      PrecisionState::MasterWeights, PrecisionState::OptimizerState,
                                                      PrecisionState::Compute};
const char *precisionStateKey(PrecisionState state);   // "master_weights"
const char *precisionStateLabel(PrecisionState state); // "master weights", "Adam m, v"

// One precision mode: which state has which dtype, and what the training loop does for it.
// The config's rules, the memory model and the engine all read this one table; adding a mode is
// a row here plus the engine's mapping of Dtype to LibTorch's types (core/engine/precision/precision.cpp).
struct PrecisionMode
{
    std::string name;                   // precision.mode in a config
    Dtype weights;                      // the model's parameters
    Dtype gradients;                    // of the parameters
    std::optional<Dtype> masterWeights; // a copy the optimizer updates and writes back to the weights
    Dtype optimizerState;               // AdamW's m and v: two values per parameter
    Dtype compute;                      // what matmul-class ops run in
    bool autocast = false;              // only matmul-class ops run in `compute`, the rest in the weights'
    bool lossScaling = false;           // a dynamic loss scaler: FP16's exponent range is narrow
    bool cudaOnly = false;              // LibTorch 1.13 has no FP16 autocast and no FP16 matmul on the CPU

    // The state's dtype; none for master weights in a mode without them.
    std::optional<Dtype> dtypeOf(PrecisionState state) const;
    // Weights, gradients, master weights and optimizer state: bytes per parameter.
    int64_t modelStateBytesPerParameter() const;
};

// Every mode, in the order tables and choices show them.
const std::vector<PrecisionMode> &precisionModes();
// The row of `name`; nullptr when there is none.
const PrecisionMode *findPrecisionMode(const std::string &name);
std::vector<std::string> precisionModeNames();

// The table as Markdown, one row per mode: docs/techniques.md shows it, and tst_precisionmodes
// keeps the page equal to it.
std::string precisionTableMarkdown();

} // namespace optlog
