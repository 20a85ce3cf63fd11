// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"
#include "core/contract/measurements.h"
#include "core/contract/precisionmodes.h"

#include <cstdint>
#include <vector>

namespace optlog {

// Closed-form parameter count of optlog's GPT (see core/engine/model/gpt.h):
//   V·C (token embedding) + T·C (positions) + L·(12·C² + 13·C) (blocks) + 2·C (final LayerNorm)
//   + V·C when the head is not tied.
// Per block: two LayerNorms 4·C, QKV 3·C² + 3·C, projection C² + C, MLP 8·C² + 5·C.
int64_t parameterCount(const ModelConfig &model);
// The elements of each parameter tensor in the model's order (Module::named_parameters): how
// data-parallel ranks bucket and shard them (shardlayout.h). Sums to parameterCount().
std::vector<int64_t> parameterSizes(const ModelConfig &model);

// Model FLOPs per token (forward and backward): 6N + 12·L·T·C, N the parameters (PaLM's appendix).
// MFU's numerator, and what a run's time is predicted from before it starts.
double modelFlopsPerToken(int64_t parameters, int64_t layers, int64_t contextLength, int64_t width);

// Model-state bytes that follow exactly from the parameter count and the precision mode:
// parameters, gradients, master weights, optimizer state; each with its dtype.
std::vector<MemoryRow> predictedModelState(const RunConfig &config);
// The same for `parameters` elements of any model trained in `mode`.
std::vector<MemoryRow> predictedModelState(const PrecisionMode &mode, int64_t parameters);

} // namespace optlog
