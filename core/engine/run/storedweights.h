// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"
#include "core/store/store.h"

#include <cstdint>
#include <optional>
#include <string>

namespace optlog {

// A stored run's weights on disk, and which of its runs can go on from them: the final weights a
// quantization starts from (the checkpoint a resume continues from: latestCheckpoint, weights.h).

// What quantizing a run starts from: its final weights, read whole, and its config.
struct QuantizableRun
{
    std::string weightsPath; // absolute
    RunConfig config;
};
// Refuses, with a StoreError naming the run and what would do instead, a run that has not
// completed, one without final weights on disk, and weights whose bytes are not those recorded.
QuantizableRun quantizableRun(const Store &store, const RunRecord &run);

} // namespace optlog
