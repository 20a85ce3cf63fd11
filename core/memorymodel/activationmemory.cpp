// SPDX-License-Identifier: MIT
// The closed-form model of a microbatch's activations and of the backward pass through them
// (docs/memory-model.md), in the steps estimateMemory takes.
#include "core/memorymodel/activationmemory_p.h"
#include "core/memorymodel/modelshape.h"

#include <algorithm>

namespace optlog {

namespace {

constexpr double kStats = 4; // LayerNorm keeps mean and 1/std in FP32

// Attention's backward, relative to what is still saved when it starts.
double attentionBackward(const ForwardShape &s, const SavedTensors &saved, double gradientBuffers)
{
    const Dtypes &d = s.d;
    const double B = s.B, T = s.T, C = s.C, H = s.H, BTC = s.BTC;
    // The MLP half, the projection input and the V copy are gone by then. Naive: the gradients of
    // the softmax weights and of the scores exist at once. Chunked: the chunks' backward runs last
    // chunk first; the largest transient is either that chunk recomputed with its gradients
    // (weights, their gradient and the scores' gradient over c x T, copies of its Q, K and V, its
    // output and the output's gradient), or later the gradients of the Q, K and V slices, padded to
    // full size and summed into the three full gradients.
    const double c = double(s.config.memory.attentionChunk), D = C / H;
    double chunkBackward = 6 * BTC * d.matmul;
    for (double start = (s.chunks - 1) * c; start >= 0; start -= c) {
        const double size = std::min(c, T - start), keys = start + size;
        const double sumsSoFar = start + size < T ? 3 * BTC * d.matmul : 0;
        // Dropout adds its mask on the chunk's weights (the dropped copy is gone before they are).
        chunkBackward = std::max(chunkBackward, (s.dropout ? 4 : 3) * B * H * size * keys * d.softmax
                                                    + B * H * size * keys * d.softmaxCopy
                                                    + B * H * (3 * size + 2 * keys) * D * d.matmul + sumsSoFar);
    }
    // With dropout on the attention weights, the dropped copy is freed before their gradients exist.
    // Before that, the product that makes the weights' gradient runs with its scratch.
    const double naiveBackward = std::max((s.dropout ? 1 : 2) * B * H * T * T * d.softmax,
                                          B * H * T * T * d.softmax + s.productScratch(T * T, B * H));
    const double transient = s.fused     ? 3 * BTC * d.matmul // the gradients of Q, K and V
                             : s.chunked ? chunkBackward
                                         : naiveBackward;
    return transient + gradientBuffers - saved.mlp - 2 * BTC * d.matmul;
}

} // namespace

ForwardShape::ForwardShape(const RunConfig &config, const DeviceTerms &device)
    : config(config)
    , device(device)
    , mode(precisionModeOf(config))
    , d(mode, device)
    , B(double(config.train.microbatch))
    , T(double(config.model.contextLength))
    , C(double(config.model.width))
    , H(double(config.model.heads))
    , V(double(config.model.vocabSize))
    , BTC(B * T * C)
    , dropout(config.model.dropout > 0)
    , chunked(resolvedAttention(config, device.hasSdpa) == Attention::Chunked
              && config.memory.attentionChunk < config.model.contextLength)
    , fused(resolvedAttention(config, device.hasSdpa) == Attention::Sdpa)
    , chunks(chunked ? double((config.model.contextLength + config.memory.attentionChunk - 1)
                              / config.memory.attentionChunk)
                     : 1)
    , generatorState(device.device == "cpu" ? 5056 : 0)
{ }

bool ForwardShape::isCheckpointed(int64_t block) const
{
    return config.memory.checkpointEvery > 0 && block % config.memory.checkpointEvery == 0;
}

double ForwardShape::productScratch(double outputElements, double batches) const
{
    return mode.compute == Dtype::BFloat16 ? device.bf16ProductScratch(outputElements, batches) : 0.0;
}

SavedTensors savedTensors(const ForwardShape &s)
{
    const Dtypes &d = s.d;
    const double B = s.B, T = s.T, C = s.C, H = s.H, V = s.V, BTC = s.BTC;
    SavedTensors out;
    if (s.fused) {
        // Flash-style kernels keep Q, K, V, their output and one log-sum-exp per query row.
        out.attention = 4 * BTC * d.matmul + B * H * T * 4;
    } else if (s.chunked) {
        // Each chunk saves views of Q, K and V, which keep the whole QKV output alive,
        // plus the generator state; no T x T matrix outlives its chunk.
        out.attention = 3 * BTC * d.matmul + s.chunks * s.generatorState;
    } else {
        // (The causal mask is added in place, which saves nothing: masked_fill kept a T x T mask.)
        out.attention = 3 * BTC * d.matmul // Q, K^T and V, copied to contiguous for the batched matmuls
                        + B * H * T * T * (d.softmax + d.softmaxCopy); // softmax output: the quadratic term
        if (s.dropout) // the mask, and the dropped weights the second bmm keeps (under CUDA's autocast its
                       // 16-bit copy of them, counted above)
            out.attention += B * H * T * T * (d.mask(d.softmax) + (d.softmaxCopy > 0 ? 0 : d.softmax));
    }
    out.mlp = 2 * B * T * kStats                          // LayerNorm 2's mean and 1/std
              + BTC * d.residual                          // residual after attention: LayerNorm 2's input
              + BTC * d.matmul                            // LayerNorm 2 output, the MLP's input
              + 4 * BTC * d.pointwise                     // MLP hidden before GELU
              + 4 * BTC * d.matmul                        // GELU output, the projection's input
              + BTC * d.residual;                         // block output: the next LayerNorm's input
    out.attentionHalf = 2 * B * T * kStats                // LayerNorm 1's mean and 1/std
                        + BTC * d.matmul                  // LayerNorm 1 output, the QKV matmul's input
                        + out.attention + BTC * d.matmul; // attention output, reshaped for the projection
    if (s.dropout) {
        // LibTorch 1.13's CPU dropout multiplies by a mask in its input's dtype; the product
        // keeps only the mask, as nothing needs the input's gradient through the mask.
        out.mlp += BTC * d.mask(d.matmul);           // residual dropout after the MLP's projection
        out.attentionHalf += BTC * d.mask(d.matmul); // and after attention's
    }
    // Autocast keeps the 16-bit copies of the block's matmul weights made during its forward.
    const double blockWeightCasts = d.autocast ? 12 * C * C * 2 : 0;
    out.block = out.mlp + out.attentionHalf + blockWeightCasts;
    // A checkpointed block keeps only its output (its input is the previous block's output).
    out.checkpointedBlock = BTC * d.residual + s.generatorState;
    out.head = 2 * B * T * kStats // final LayerNorm statistics
               + BTC * d.matmul   // final LayerNorm output, the head's input
               + B * T * V * 4    // log-softmax output: the loss is taken in FP32
               + (d.autocast ? V * C * (s.config.model.tiedHead ? 1 : 2) * 2 : 0); // head weight cast
    out.total = out.head + T * 8                                                   // position indices
                + BTC * d.residual;                                                // embedding sum: block 0's input
    if (s.dropout)
        out.total += BTC * d.mask(d.residual); // embedding dropout's mask
    for (int64_t i = 0; i < s.config.model.layers; ++i)
        out.total += s.isCheckpointed(i) ? out.checkpointedBlock : out.block;
    return out;
}

BackwardPeak backwardPeak(const ForwardShape &s, const SavedTensors &saved, int64_t parameters, int64_t shard)
{
    const Dtypes &d = s.d;
    const double B = s.B, T = s.T, C = s.C, V = s.V, BTC = s.BTC, n = double(parameters);
    const auto &distributed = s.config.distributed;
    // Walk backward from the loss, freeing each part's saved tensors as its gradient is done.
    const double gradientBuffers = 2 * BTC * 4; // gradients of the residual stream in flight
    const double attention = attentionBackward(s, saved, gradientBuffers);
    // MLP backward, relative to what is saved when the block's backward starts: the block output's
    // gradient, then the gradient of the GELU output beside the GELU input's, both hidden-sized
    // (4·B·T·C), while the GELU output is already freed.
    // The product that makes the GELU output's gradient runs beside the block output's gradient,
    // with its scratch.
    const double mlpBackward = std::max(BTC * d.residual + 4 * BTC * std::max(d.matmul, d.pointwise),
                                        BTC * d.residual + 4 * BTC * d.matmul + s.productScratch(4 * BTC));
    // ZeRO-2 keeps the shard's gradients between steps, but backward still builds every gradient
    // before they are reduced: `built`, the gradients backward has allocated so far, is a temporary
    // of each step (from the second microbatch on, all of them).
    const double gradientBytes = double(dtypeBytes(s.mode.gradients));
    const bool unreduced = distributed.zeroStage >= 2;
    const double blockParameters = 12 * C * C + 13 * C;
    double built = unreduced && s.config.train.accumulation > 1 ? gradientBytes * n : 0;
    const auto allocate = [&](double elements) {
        if (unreduced)
            built = std::min(gradientBytes * n, built + gradientBytes * elements);
    };
    // A checkpointed block's nested backward reaches its highest point in the MLP later than a
    // plain block's, as the first weight's gradient is made: 4·C² in the gradients' dtype (under
    // autocast first in BF16 for the cast weight, then converted). Where the weights are large
    // against the activations (B·T below about 4·C) the 16-bit modes make more transients here
    // than this counts (docs/memory-model.md).
    // Its product's scratch is booked after the GELU gradient's product has given its own back:
    // only what it books beyond that adds to mlpBackward.
    const double weightGradient = 4 * C * C * (gradientBytes + (d.autocast ? 2 : 0))
                                  + std::max(0.0, s.productScratch(4 * C * C) - s.productScratch(4 * BTC));
    double live = saved.total;
    // The highest point so far, and the phase of a step's memory timeline it is in (memorytimeline.h).
    BackwardPeak peak;
    peak.highest = live + built + 2 * B * T * V * 4; // loss and log-softmax gradients over the logits
    peak.phase = {StepPart::Backward, TimelinePhase::kLossBlock};
    const auto reach = [&](double bytes, StepPart part, int64_t block) {
        if (bytes > peak.highest)
            peak = {bytes, {part, block}};
    };
    // The head's product in the forward, before the log-softmax output exists: the logits and the
    // product's scratch.
    reach(live - B * T * V * 4 + B * T * V * d.matmul + s.productScratch(B * T * V), StepPart::Loss,
          TimelinePhase::kNoBlock);
    live -= saved.head;
    allocate(V * C + 2 * C); // the head's weight (tied: the token embedding's), the final LayerNorm
    for (int64_t i = s.config.model.layers - 1; i >= 0; --i) {
        allocate(blockParameters); // by the block's backward's highest point, at most all of its own
        if (s.isCheckpointed(i)) {
            // The block is recomputed with its saved tensors, then its own backward runs.
            // By the nested attention backward, its output's gradient and its input's are alive too.
            reach(live + built + saved.block
                      + std::max({gradientBuffers, mlpBackward + weightGradient, attention + 2 * BTC * d.residual}),
                  StepPart::Backward, i);
            live -= saved.checkpointedBlock;
            continue;
        }
        // Attention backward: the gradient of the softmax weights and of the scores exist at once,
        // after the MLP half, the projection input and the V copy are gone.
        reach(live + built + std::max(mlpBackward, attention), StepPart::Backward, i);
        live -= saved.block;
    }
    // The optimizer step: activations are gone; master weights add their FP32 gradients (for the
    // shard only under ZeRO). ZeRO-2 reduces every gradient first.
    const double masterElements = distributed.zeroStage >= 1 ? double(shard) : n;
    const double masterGradients = s.mode.masterWeights ? double(dtypeBytes(*s.mode.masterWeights)) * masterElements
                                                        : 0;
    reach(masterGradients, StepPart::MasterGradients, TimelinePhase::kNoBlock);
    reach(unreduced ? gradientBytes * n : 0.0, StepPart::GradientReduction, TimelinePhase::kNoBlock);
    return peak;
}

DeviceOverhead deviceOverhead(const ForwardShape &s)
{
    std::vector<int64_t> stateTensorBytes;
    const std::vector<int64_t> sizes = parameterSizes(s.config.model);
    for (const auto &row : predictedModelState(s.mode, 1)) {
        const int64_t tensors = row.role == MemoryRole::OptimizerState ? 2 : 1; // AdamW's m and v
        for (const int64_t size : sizes)
            for (int64_t i = 0; i < tensors; ++i)
                stateTensorBytes.push_back(size * row.bytes / tensors);
    }
    return {s.device.workspaceBytes(), s.device.roundingBytes(stateTensorBytes)};
}

} // namespace optlog
