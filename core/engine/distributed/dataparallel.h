// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"
#include "core/engine/distributed/rankgroup.h"
#include "core/engine/precision/precision.h"
#include "core/memorymodel/shardlayout.h"

#include <ATen/core/Tensor.h>

#include <optional>
#include <vector>

namespace optlog {

// One model trained data-parallel over the ranks of a RankGroup: after backward the gradients are
// averaged over the ranks, by collectives on FP32 buckets (the ShardLayout's) allocated once. No
// collective overlaps backward: the step's communication follows it.
//
// Without ZeRO every rank all-reduces every bucket and steps every parameter. With ZeRO (stage 1 or
// 2) each rank owns its part of every bucket (its shard): each part is reduced to its owner (Gloo
// in LibTorch 1.13 has no reduce-scatter, so one reduce per part), the owner alone keeps AdamW's
// moments and master weights for it and steps it, and the updated parts are all-gathered into
// every rank's weights. Stage 2 also keeps only the shard's gradients between steps.
class DataParallel
{
public:
    DataParallel(RankGroup &group, const RunConfig &config, const std::vector<at::Tensor> &parameters,
                 bool masterWeights);

    int64_t zeroStage() const { return m_stage; }
    // ZeRO: what AdamW steps on this rank, one tensor per piece of the shard: a flat view into its
    // parameter, or with master weights an FP32 copy of it. Empty without ZeRO.
    const std::vector<at::Tensor> &shard() const { return m_shard; }
    // The parameter each tensor of shard() is a piece of (for its name and its weight decay).
    std::vector<int64_t> shardParameters() const;

    // After backward: without ZeRO, every parameter's gradient becomes the mean over the ranks;
    // with ZeRO, the shard's gradients do (stage 2 then releases the parameters' own).
    void reduceGradients();
    // Before AdamW, on what it steps (`optimized`: the parameters or master weights, under ZeRO
    // shard()): unscaleAndClip() over every rank's gradients, the norm summed part by part in one
    // order whatever the stage (so ZeRO clips as plain data parallelism does) and whether a
    // gradient is inf or NaN agreed by all.
    std::optional<double> unscaleAndClip(const std::vector<at::Tensor> &optimized, const LossScaler *scaler,
                                         double maxNorm);
    // ZeRO, after AdamW: every rank's weights from the ranks' updated shards.
    void gatherParameters();
    // After the optimizer step with master weights: the shard's FP32 gradients are dropped.
    void releaseShardGradients();

    // The mean of `value` over the ranks, and whether any of them asked to stop: one small
    // all-reduce per step, so that every rank ends at the same step.
    std::pair<double, bool> agree(double value, bool stopRequested);

    // What this rank keeps between steps: the gradients (stage 2: the shard's), the buffers.
    std::vector<at::Tensor> keptGradients() const;
    std::vector<at::Tensor> communicationBuffers() const { return {m_bucket, m_part}; }

private:
    // Copies each parameter's gradient of bucket `b` into the FP32 bucket buffer, zero-padded.
    void fillBucket(size_t b);

    RankGroup &m_group;
    int64_t m_stage;
    bool m_masterWeights;
    std::vector<at::Tensor> m_parameters;
    ShardLayout m_layout;
    std::vector<ShardLayout::Piece> m_pieces; // this rank's
    std::vector<at::Tensor> m_shard;          // AdamW's tensors, one per piece
    std::vector<at::Tensor> m_shardGradients; // the reduced gradient of each piece, in the gradients' dtype
    at::Tensor m_bucket;                      // FP32, the largest bucket
    at::Tensor m_part;                        // ZeRO: FP32, what this rank sends to a gather
};

} // namespace optlog
