// SPDX-License-Identifier: MIT
#include "core/modelshape.h"

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
    // fp32 is the only mode so far: 4 bytes each for weights and gradients, 8 for Adam's m and v.
    return {
        {"parameters", "float32", 4 * n, "predicted"},
        {"gradients", "float32", 4 * n, "predicted"},
        {"optimizer_state", "float32", 8 * n, "predicted"},
    };
}

} // namespace optlog
