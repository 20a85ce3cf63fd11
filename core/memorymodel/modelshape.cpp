// SPDX-License-Identifier: MIT
#include "core/memorymodel/modelshape.h"

namespace optlog {

int64_t parameterCount(const ModelConfig &m)
{
    const int64_t C = m.width;
    const int64_t perBlock = 12 * C * C + 13 * C;
    const int64_t head = m.tiedHead ? 0 : m.vocabSize * C;
    return m.vocabSize * C + m.contextLength * C + m.layers * perBlock + 2 * C + head;
}

std::vector<MemoryRow> predictedModelState(const RunConfig &config)
{
    const int64_t n = parameterCount(config.model);
    const std::string &mode = config.precision.mode;
    // DESIGN.md's precision table: bytes per parameter of each state.
    const bool sixteenBitWeights = mode.rfind("master-", 0) == 0 || mode == "pure-bf16";
    const std::string half = mode == "master-fp16" ? "float16" : "bfloat16";
    const std::string weights = sixteenBitWeights ? half : "float32";
    const int64_t weightBytes = sixteenBitWeights ? 2 : 4;
    std::vector<MemoryRow> rows = {
        {"parameters", weights, weightBytes * n, "predicted"},
        {"gradients", weights, weightBytes * n, "predicted"},
        {"optimizer_state", mode == "pure-bf16" ? "bfloat16" : "float32", (mode == "pure-bf16" ? 4 : 8) * n,
         "predicted"},
    };
    if (mode.rfind("master-", 0) == 0)
        rows.push_back({"master_weights", "float32", 4 * n, "predicted"});
    return rows;
}

} // namespace optlog
