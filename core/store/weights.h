// SPDX-License-Identifier: MIT
// Weights on disk and what was made of them: a run's weights files (final weights, checkpoints)
// and its quantizations. A run's files live in weightsFolder() ("<study file>.weights/run-<id>",
// relative to the study's folder, as every path the study holds, so that the study and its weights
// move together); the study holds each file's path, bytes, SHA-256 and step.
#pragma once

#include "core/store/store.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace optlog {

std::string weightsFolder(const Store &study, int64_t runId);
void addWeightFile(Store &study, int64_t runId, const WeightFile &file); // replaces one of the same kind and step
std::vector<WeightFile> weightFiles(const Store &study, int64_t runId);  // the final weights first, then by step
// The run's newest checkpoint, the one `optlog run --resume` continues from; none where it wrote none.
std::optional<WeightFile> latestCheckpoint(const Store &study, int64_t runId);
// Removes the run's checkpoints, rows and files, keeping its final weights: the bytes freed.
int64_t pruneCheckpoints(Store &study, int64_t runId);

// Replaces a quantization of the same scheme, group and tensors.
void storeQuantization(Store &study, int64_t runId, const QuantizationResult &result);
std::vector<QuantizationResult> quantizations(const Store &study, int64_t runId); // oldest first

} // namespace optlog
