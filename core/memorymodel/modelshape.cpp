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

std::vector<int64_t> parameterSizes(const ModelConfig &m)
{
    const int64_t C = m.width;
    std::vector<int64_t> sizes = {m.vocabSize * C, m.contextLength * C}; // token and position embeddings
    for (int64_t block = 0; block < m.layers; ++block)
        sizes.insert(sizes.end(), {C, C,             // ln1
                                   3 * C * C, 3 * C, // attention.qkv
                                   C * C, C,         // attention.proj
                                   C, C,             // ln2
                                   4 * C * C, 4 * C, // mlp.fc
                                   4 * C * C, C});   // mlp.proj
    sizes.insert(sizes.end(), {C, C});               // final LayerNorm
    if (!m.tiedHead)
        sizes.push_back(m.vocabSize * C);
    return sizes;
}

std::vector<MemoryRow> predictedModelState(const RunConfig &config)
{
    return predictedModelState(precisionModeOf(config), parameterCount(config.model));
}

std::vector<MemoryRow> predictedModelState(const PrecisionMode &mode, int64_t n)
{
    const auto row = [n](MemoryRole role, Dtype dtype, int64_t perParameter) {
        return MemoryRow{role, dtypeName(dtype), perParameter * dtypeBytes(dtype) * n, MemorySource::Predicted};
    };
    std::vector<MemoryRow> rows = {
        row(MemoryRole::Parameters, mode.weights, 1), row(MemoryRole::Gradients, mode.gradients, 1),
        row(MemoryRole::OptimizerState, mode.optimizerState, 2), // AdamW's m and v
    };
    if (mode.masterWeights)
        rows.push_back(row(MemoryRole::MasterWeights, *mode.masterWeights, 1));
    return rows;
}

double modelFlopsPerToken(int64_t parameters, int64_t layers, int64_t contextLength, int64_t width)
{
    return 6.0 * double(parameters) + 12.0 * double(layers) * double(contextLength) * double(width);
}

} // namespace optlog
