// SPDX-License-Identifier: MIT
#include "core/memorymodel/memorymodel.h"

#include "core/config/configerror.h"
#include "core/contract/format.h"
#include "core/memorymodel/modelshape.h"
#include "core/memorymodel/shardlayout.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace optlog {

namespace {

// Bytes per element of what the forward keeps, from the mode's row of the precision table and the
// device's autocast op list (deviceterms.h).
struct Dtypes
{
    Dtypes(const PrecisionMode &mode, const DeviceTerms &device)
        : matmul(dtypeBytes(mode.compute))
        , residual(dtypeBytes(mode.weights))
        , pointwise(dtypeBytes(mode.compute))
        , autocast(mode.autocast)
        , softmax(mode.autocast && device.autocastOps == AutocastOps::Cuda ? 4 : pointwise)
        , softmaxCopy(mode.autocast && device.autocastOps == AutocastOps::Cuda ? matmul : 0)
        , boolMasks(device.boolDropoutMasks)
    { }
    double matmul;      // activations that matmul-class ops save (their inputs), in the compute dtype
    double residual;    // the residual stream, LayerNorm inputs: autocast leaves them in the weights' dtype
    double pointwise;   // GELU inputs and outputs: they run on the matmuls' outputs
    bool autocast;      // matmul weights are cast per forward, and the casts are saved
    double softmax;     // attention's softmax output: FP32 where autocast lists softmax as FP32 (CUDA)
    double softmaxCopy; // the 16-bit copy of it the second product saves there; 0 where none is made
    bool boolMasks;     // dropout's mask: 1 byte (CUDA's fused dropout), else its input's dtype
    double mask(double inputBytes) const { return boolMasks ? 1 : inputBytes; }
};

// The device's terms the estimate assumed, the calibration that corrected it, and what is not
// known on this machine: a section of formatEstimate().
std::string formatDeviceTerms(const MemoryEstimate &estimate)
{
    const DeviceTerms &device = estimate.device;
    std::ostringstream out;
    out << "\nDevice: " << device.describe() << "\n";
    out << "  autocast:    "
        << (device.autocastOps == AutocastOps::Cuda
                ? "CUDA's op list (softmax, log_softmax, layer_norm in FP32; PyTorch's torch.amp reference)"
                : "the CPU's op list (matmul-class ops in 16 bits, the rest in their input's dtype)")
        << "\n";
    if (device.workspaceBytes() > 0)
        out << "  workspaces:  " << formatBytes(device.workspaceBytes()) << " (" << device.workspaceSource << ")\n";
    else
        out << "  workspaces:  none through the allocator (oneDNN's and OpenBLAS's scratch shows in the peak RSS)\n";
    out << "  allocator:   "
        << (device.allocationGranuleBytes > 1
                ? "every block rounded up to " + std::to_string(device.allocationGranuleBytes)
                      + " bytes (the caching allocator's smallest block)"
                : std::string("counts the bytes asked for (optlog's counting allocator)"))
        << "\n";
    out << "  calibration: " << (estimate.calibration.empty() ? "none" : estimate.calibration) << "\n";
    for (const auto &unknown : device.unknown)
        out << "  not known here: " << unknown << "\n";
    return out.str();
}

} // namespace

const RoleEstimate *MemoryEstimate::find(MemoryRole role) const
{
    for (const auto &r : roles)
        if (r.role == role)
            return &r;
    return nullptr;
}

int64_t MemoryEstimate::stateBytes() const
{
    int64_t bytes = 0;
    for (const auto &r : roles)
        if (r.role != MemoryRole::SavedActivations && r.role != MemoryRole::Temporaries)
            bytes += r.bytes;
    return bytes;
}

std::vector<MemoryRow> MemoryEstimate::rows() const
{
    std::vector<MemoryRow> out;
    for (const auto &r : roles)
        out.push_back({r.role, r.dtype, r.bytes, MemorySource::Predicted});
    if (activationsPredicted)
        out.push_back({MemoryRole::Peak, "mixed", peakBytes, MemorySource::Predicted});
    return out;
}

ShardLayout shardLayoutOf(const RunConfig &config, const std::vector<int64_t> &parameterSizes)
{
    return shardLayout(parameterSizes, config.distributed.ranks,
                       config.distributed.bucketMib * 1024 * 1024 / kCommunicationBytesPerElement);
}

ShardLayout shardLayoutOf(const RunConfig &config)
{
    return shardLayoutOf(config, parameterSizes(config.model));
}

MemoryEstimate modelStateEstimate(const RunConfig &config, const std::vector<int64_t> &parameterSizes, int64_t rank)
{
    int64_t n = 0;
    for (const int64_t size : parameterSizes)
        n += size;
    const PrecisionMode &mode = precisionModeOf(config);
    MemoryEstimate e;
    e.activationsPredicted = false;
    e.parameters = n;
    // Data parallel: ZeRO keeps this rank's shard of some states (shardlayout.h); the buckets
    // collectives run in are allocated once.
    const auto &distributed = config.distributed;
    const ShardLayout layout = shardLayoutOf(config, parameterSizes);
    const int64_t shard = layout.shardElements(rank);
    const auto isSharded = [&distributed](MemoryRole role) {
        return (distributed.zeroStage >= 1 && (role == MemoryRole::OptimizerState || role == MemoryRole::MasterWeights))
               || (distributed.zeroStage >= 2 && role == MemoryRole::Gradients);
    };
    for (auto &row : predictedModelState(mode, n)) {
        const double perElement = n > 0 ? double(row.bytes) / double(n) : 0;
        if (isSharded(row.role))
            e.roles.push_back({row.role, row.dtype, perElement, int64_t(perElement) * shard,
                               "exact: this rank's shard of " + std::to_string(n) + " parameters"});
        else
            e.roles.push_back({row.role, row.dtype, perElement, row.bytes, "exact, from the parameter count"});
    }
    if (distributed.ranks > 1) {
        const int64_t elements = layout.largestBucket() + (distributed.zeroStage > 0 ? layout.largestPart() : 0);
        e.roles.push_back({MemoryRole::CommunicationBuffers, "float32", double(kCommunicationBytesPerElement),
                           elements * kCommunicationBytesPerElement,
                           distributed.zeroStage > 0 ? "the largest bucket and the part a rank sends to the gather"
                                                     : "the largest bucket of gradients"});
    }
    for (const auto &r : e.roles)
        e.peakBytes += r.bytes;
    return e;
}

MemoryEstimate estimateMemory(const RunConfig &config, int64_t rank)
{
    return estimateMemory(config, assumedDeviceTerms(config), rank);
}

MemoryEstimate estimateMemory(const RunConfig &config, const DeviceTerms &device, int64_t rank)
{
    if (config.model.source != ModelSource::Builtin)
        throw ConfigError("model.source", "model.source = \"" + nameOf(config.model.source)
                                              + "\": the closed-form memory model is optlog's own GPT's; a "
                                                "TorchScript module's memory is predicted by probing it "
                                                "(optlog estimate, optlog run; docs/torchscript.md)");
    const auto &m = config.model;
    const double B = double(config.train.microbatch), T = double(m.contextLength), C = double(m.width),
                 H = double(m.heads), V = double(m.vocabSize);
    const PrecisionMode &mode = precisionModeOf(config);
    const Dtypes d(mode, device);
    const bool dropout = m.dropout > 0;
    const Attention attentionKind = resolvedAttention(config, device.hasSdpa);
    const bool chunked = attentionKind == Attention::Chunked && config.memory.attentionChunk < m.contextLength;
    const bool fused = attentionKind == Attention::Sdpa;
    const double chunks = chunked ? double((m.contextLength + config.memory.attentionChunk - 1)
                                           / config.memory.attentionChunk)
                                  : 1;
    const double BTC = B * T * C;
    // Bytes of the CPU generator's state, saved per checkpoint: a CPU tensor, so on a GPU it is not
    // in the device's memory.
    const double kGeneratorState = device.device == "cpu" ? 5056 : 0;
    constexpr double kStats = 4; // LayerNorm keeps mean and 1/std in FP32

    MemoryEstimate e = modelStateEstimate(config, parameterSizes(m), rank);
    e.device = device;
    e.activationsPredicted = true;
    e.peakBytes = 0;
    const int64_t n = parameterCount(m);
    const auto &distributed = config.distributed;
    const int64_t shard = shardLayoutOf(config).shardElements(rank);

    // Saved activations of one block that is not checkpointed, in bytes.
    double attention = 0;
    if (fused) {
        // Flash-style kernels keep Q, K, V, their output and one log-sum-exp per query row.
        attention = 4 * BTC * d.matmul + B * H * T * 4;
    } else if (chunked) {
        // Each chunk saves views of Q, K and V, which keep the whole QKV output alive,
        // plus the generator state; no T x T matrix outlives its chunk.
        attention = 3 * BTC * d.matmul + chunks * kGeneratorState;
    } else {
        // (The causal mask is added in place, which saves nothing: masked_fill kept a T x T mask.)
        attention = 3 * BTC * d.matmul // Q, K^T and V, copied to contiguous for the batched matmuls
                    + B * H * T * T * (d.softmax + d.softmaxCopy); // softmax output: the quadratic term
        if (dropout) // the mask, and the dropped weights the second bmm keeps (under CUDA's autocast its
                     // 16-bit copy of them, counted above)
            attention += B * H * T * T * (d.mask(d.softmax) + (d.softmaxCopy > 0 ? 0 : d.softmax));
    }
    // What the MLP half of a block keeps; it is freed first in backward.
    double mlp = 2 * B * T * kStats                      // LayerNorm 2's mean and 1/std
                 + BTC * d.residual                      // residual after attention: LayerNorm 2's input
                 + BTC * d.matmul                        // LayerNorm 2 output, the MLP's input
                 + 4 * BTC * d.pointwise                 // MLP hidden before GELU
                 + 4 * BTC * d.matmul                    // GELU output, the projection's input
                 + BTC * d.residual;                     // block output: the next LayerNorm's input
    double attentionHalf = 2 * B * T * kStats            // LayerNorm 1's mean and 1/std
                           + BTC * d.matmul              // LayerNorm 1 output, the QKV matmul's input
                           + attention + BTC * d.matmul; // attention output, reshaped for the projection
    if (dropout) {
        // LibTorch 1.13's CPU dropout multiplies by a mask in its input's dtype; the product
        // keeps only the mask, as nothing needs the input's gradient through the mask.
        mlp += BTC * d.mask(d.matmul);           // residual dropout after the MLP's projection
        attentionHalf += BTC * d.mask(d.matmul); // and after attention's
    }
    // Autocast keeps the 16-bit copies of the block's matmul weights made during its forward.
    const double blockWeightCasts = d.autocast ? 12 * C * C * 2 : 0;
    const double block = mlp + attentionHalf + blockWeightCasts;
    // A checkpointed block keeps only its output (its input is the previous block's output).
    const double checkpointedBlock = BTC * d.residual + kGeneratorState;
    const auto isCheckpointed = [&config](int64_t i) {
        return config.memory.checkpointEvery > 0 && i % config.memory.checkpointEvery == 0;
    };

    const double head = 2 * B * T * kStats // final LayerNorm statistics
                        + BTC * d.matmul   // final LayerNorm output, the head's input
                        + B * T * V * 4    // log-softmax output: the loss is taken in FP32
                        + (d.autocast ? V * C * (m.tiedHead ? 1 : 2) * 2 : 0); // head weight cast
    double saved = head + T * 8                                                // position indices
                   + BTC * d.residual;                                         // embedding sum: block 0's input
    if (dropout)
        saved += BTC * d.mask(d.residual); // embedding dropout's mask
    for (int64_t i = 0; i < m.layers; ++i)
        saved += isCheckpointed(i) ? checkpointedBlock : block;
    e.roles.push_back({MemoryRole::SavedActivations, "mixed", 0, int64_t(saved),
                       "what autograd keeps from one microbatch's forward pass"});

    // Scratch a BF16 product takes through the allocator while it runs (deviceterms.h: FP32 copies
    // of its output where oneDNN's BF16 matmul lacks native BF16); none elsewhere.
    const auto productScratch = [&](double outputElements, double batches = 1) {
        return mode.compute == Dtype::BFloat16 ? device.bf16ProductScratch(outputElements, batches) : 0.0;
    };

    // Temporaries: walk backward from the loss, freeing each part's saved tensors as its
    // gradient is done, and take the highest point of (still saved + transient) over the
    // saved total at the end of the forward.
    const double gradientBuffers = 2 * BTC * 4; // gradients of the residual stream in flight
    // Attention backward, relative to what is still saved when it starts (the MLP half, the
    // projection input and the V copy are gone by then). Naive: the gradients of the softmax
    // weights and of the scores exist at once. Chunked: the chunks' backward runs last chunk first;
    // the largest transient is either that chunk recomputed with its gradients (weights, their
    // gradient and the scores' gradient over c x T, copies of its Q, K and V, its output and the
    // output's gradient), or later the gradients of the Q, K and V slices, padded to full size
    // and summed into the three full gradients.
    const double c = double(config.memory.attentionChunk), D = C / H;
    double chunkBackward = 6 * BTC * d.matmul;
    for (double start = (chunks - 1) * c; start >= 0; start -= c) {
        const double size = std::min(c, T - start), keys = start + size;
        const double sumsSoFar = start + size < T ? 3 * BTC * d.matmul : 0;
        // Dropout adds its mask on the chunk's weights (the dropped copy is gone before they are).
        chunkBackward = std::max(chunkBackward, (dropout ? 4 : 3) * B * H * size * keys * d.softmax
                                                    + B * H * size * keys * d.softmaxCopy
                                                    + B * H * (3 * size + 2 * keys) * D * d.matmul + sumsSoFar);
    }
    // With dropout on the attention weights, the dropped copy is freed before their gradients exist.
    // Before that, the product that makes the weights' gradient runs with its scratch.
    const double naiveBackward = std::max((dropout ? 1 : 2) * B * H * T * T * d.softmax,
                                          B * H * T * T * d.softmax + productScratch(T * T, B * H));
    const double attentionTransient = fused     ? 3 * BTC * d.matmul // the gradients of Q, K and V
                                      : chunked ? chunkBackward
                                                : naiveBackward;
    const double attentionBackward = attentionTransient + gradientBuffers - mlp - 2 * BTC * d.matmul;
    // MLP backward, relative to what is saved when the block's backward starts: the block output's
    // gradient, then the gradient of the GELU output beside the GELU input's, both hidden-sized
    // (4·B·T·C), while the GELU output is already freed.
    // The product that makes the GELU output's gradient runs beside the block output's gradient,
    // with its scratch.
    const double mlpBackward = std::max(BTC * d.residual + 4 * BTC * std::max(d.matmul, d.pointwise),
                                        BTC * d.residual + 4 * BTC * d.matmul + productScratch(4 * BTC));
    // ZeRO-2 keeps the shard's gradients between steps, but backward still builds every gradient
    // before they are reduced: `built`, the gradients backward has allocated so far, is a temporary
    // of each step (from the second microbatch on, all of them).
    const double gradientBytes = double(dtypeBytes(mode.gradients));
    const bool unreduced = distributed.zeroStage >= 2;
    const double blockParameters = 12 * C * C + 13 * C;
    double built = unreduced && config.train.accumulation > 1 ? gradientBytes * double(n) : 0;
    const auto allocate = [&](double elements) {
        if (unreduced)
            built = std::min(gradientBytes * double(n), built + gradientBytes * elements);
    };
    // A checkpointed block's nested backward reaches its highest point in the MLP later than a
    // plain block's, as the first weight's gradient is made: 4·C² in the gradients' dtype (under
    // autocast first in BF16 for the cast weight, then converted). Where the weights are large
    // against the activations (B·T below about 4·C) the 16-bit modes make more transients here
    // than this counts (docs/memory-model.md).
    // Its product's scratch is booked after the GELU gradient's product has given its own back:
    // only what it books beyond that adds to mlpBackward.
    const double weightGradient = 4 * C * C * (gradientBytes + (d.autocast ? 2 : 0))
                                  + std::max(0.0, productScratch(4 * C * C) - productScratch(4 * BTC));
    double live = saved;
    // The highest point so far, and the phase of a step's memory timeline it is in (memorytimeline.h).
    double highest = live + built + 2 * B * T * V * 4; // loss and log-softmax gradients over the logits
    e.peakPhase = {StepPart::Backward, TimelinePhase::kLossBlock};
    const auto reach = [&](double bytes, StepPart part, int64_t block) {
        if (bytes > highest) {
            highest = bytes;
            e.peakPhase = {part, block};
        }
    };
    // The head's product in the forward, before the log-softmax output exists: the logits and the
    // product's scratch.
    reach(live - B * T * V * 4 + B * T * V * d.matmul + productScratch(B * T * V), StepPart::Loss,
          TimelinePhase::kNoBlock);
    live -= head;
    allocate(V * C + 2 * C); // the head's weight (tied: the token embedding's), the final LayerNorm
    for (int64_t i = m.layers - 1; i >= 0; --i) {
        allocate(blockParameters); // by the block's backward's highest point, at most all of its own
        if (isCheckpointed(i)) {
            // The block is recomputed with its saved tensors, then its own backward runs.
            // By the nested attention backward, its output's gradient and its input's are alive too.
            reach(live + built + block
                      + std::max(
                          {gradientBuffers, mlpBackward + weightGradient, attentionBackward + 2 * BTC * d.residual}),
                  StepPart::Backward, i);
            live -= checkpointedBlock;
            continue;
        }
        // Attention backward: the gradient of the softmax weights and of the scores exist at once,
        // after the MLP half, the projection input and the V copy are gone.
        reach(live + built + std::max(mlpBackward, attentionBackward), StepPart::Backward, i);
        live -= block;
    }
    // The optimizer step: activations are gone; master weights add their FP32 gradients (for the
    // shard only under ZeRO). ZeRO-2 reduces every gradient first.
    const double masterElements = double(distributed.zeroStage >= 1 ? shard : n);
    const double masterGradients = mode.masterWeights ? double(dtypeBytes(*mode.masterWeights)) * masterElements : 0;
    reach(masterGradients, StepPart::MasterGradients, TimelinePhase::kNoBlock);
    reach(unreduced ? gradientBytes * double(n) : 0.0, StepPart::GradientReduction, TimelinePhase::kNoBlock);
    const double batches = double(config.train.accumulation) * 2 * B * T * 8; // the step's token tensors
    // The device's own: the product libraries' workspaces (held once made), and the allocator's
    // rounding of the model state's tensors.
    std::vector<int64_t> stateTensorBytes;
    const std::vector<int64_t> sizes = parameterSizes(m);
    for (const auto &row : predictedModelState(mode, 1)) {
        const int64_t tensors = row.role == MemoryRole::OptimizerState ? 2 : 1; // AdamW's m and v
        for (const int64_t size : sizes)
            for (int64_t i = 0; i < tensors; ++i)
                stateTensorBytes.push_back(size * row.bytes / tensors);
    }
    const int64_t workspaces = device.workspaceBytes(), rounding = device.roundingBytes(stateTensorBytes);
    const double temporaries = batches + std::max(0.0, highest - saved) + double(workspaces + rounding);
    std::string note = "the step's input batches and the highest transient of backward";
    if (workspaces > 0)
        note += "; " + formatBytes(workspaces) + " of cuBLAS workspaces";
    if (rounding > 0)
        note += "; " + formatBytes(rounding) + " of the allocator's rounding of the model state";
    e.roles.push_back({MemoryRole::Temporaries, "mixed", 0, int64_t(temporaries), note});

    for (const auto &r : e.roles)
        e.peakBytes += r.bytes;
    return e;
}

int64_t korthikantiActivationBytes(const ModelConfig &model, int64_t microbatch)
{
    const double s = double(model.contextLength), b = double(microbatch), h = double(model.width),
                 a = double(model.heads);
    return int64_t(double(model.layers) * (34 * s * b * h + 5 * a * s * s * b));
}

std::vector<ShardedModelState> zeroSharding(const RunConfig &config, int64_t ranks)
{
    int64_t weights = 0, gradients = 0, optimizer = 0;
    for (const auto &row : predictedModelState(config)) {
        if (row.role == MemoryRole::Parameters)
            weights = row.bytes;
        else if (row.role == MemoryRole::Gradients)
            gradients = row.bytes;
        else
            optimizer += row.bytes; // optimizer state and master weights shard together
    }
    const auto shard = [ranks](int64_t bytes) { return (bytes + ranks - 1) / ranks; };
    return {
        {0, ranks, weights + gradients + optimizer},
        {1, ranks, weights + gradients + shard(optimizer)},
        {2, ranks, weights + shard(gradients) + shard(optimizer)},
        {3, ranks, shard(weights) + shard(gradients) + shard(optimizer)},
    };
}

std::vector<QuantizedWeights> quantizedWeightRows(const ModelConfig &model, int64_t groupSize)
{
    const int64_t n = parameterCount(model);
    const int64_t groups = (n + groupSize - 1) / groupSize;
    return {
        {"fp8 (e4m3), one fp32 scale per tensor", n + 4 * (4 + 6 * model.layers),
         "estimate: needs FP8 matmul hardware (Hopper, Ada); activations and the dequantized compute not included"},
        {"4-bit, groups of " + std::to_string(groupSize) + ", fp16 scale per group", n / 2 + 2 * groups,
         "estimate: weights only, every tensor quantized; dequantization workspace and activations not included "
         "(`optlog quantize` measures the whole bill and its loss on a finished run)"},
    };
}

std::string formatEstimate(const RunConfig &config, const MemoryEstimate &estimate, int64_t ranks)
{
    std::ostringstream out;
    char line[256];
    out << "Predicted memory of one training step" << (config.distributed.ranks > 1 ? ", per rank (rank 0)" : "")
        << ": " << config.name << " (" << config.precision.mode << ", microbatch " << config.train.microbatch << ", T "
        << config.model.contextLength << ", " << estimate.parameters << " parameters";
    if (config.distributed.ranks > 1)
        out << ", " << config.distributed.ranks << " ranks, ZeRO stage " << config.distributed.zeroStage;
    out << ")\n";
    std::snprintf(line, sizeof(line), "  %-18s %-9s %11s %12s  %s\n", "role", "dtype", "bytes/elem", "bytes", "what");
    out << line;
    for (const auto &r : estimate.roles) {
        std::snprintf(line, sizeof(line), "  %-18s %-9s %11s %12s  %s\n", memoryRoleName(r.role), r.dtype.c_str(),
                      r.bytesPerElement > 0 ? std::to_string(int(r.bytesPerElement)).c_str() : "-",
                      formatBytes(r.bytes).c_str(), r.note.c_str());
        out << line;
    }
    std::string what = estimate.device.device == "cuda" ? "the caching allocator's allocated peak over a complete step"
                                                        : "the counting allocator's peak over a complete step";
    if (config.model.source == ModelSource::Builtin)
        what += ", at " + estimate.peakPhase.name();
    std::snprintf(line, sizeof(line), "  %-18s %-9s %11s %12s  %s\n", "peak", "", "",
                  formatBytes(estimate.peakBytes).c_str(), what.c_str());
    out << line;
    out << formatDeviceTerms(estimate);
    if (config.model.source != ModelSource::Builtin) {
        out << "\nSaved activations and temporaries: " << estimate.source << "\n";
        return out.str();
    }
    out << "\nCross-check, Korthikanti et al. (16-bit activations with dropout masks): "
        << formatBytes(korthikantiActivationBytes(config.model, config.train.microbatch)) << " of activations\n";
    out << "\nModel state per rank with ZeRO over " << ranks << " data-parallel ranks:\n";
    for (const auto &z : zeroSharding(config, ranks)) {
        std::snprintf(line, sizeof(line), "  stage %d: %s%s\n", z.stage, formatBytes(z.bytesPerRank).c_str(),
                      z.stage == 0 ? " (no sharding)" : "");
        out << line;
    }
    out << "\nWeights in other formats (estimates for hardware this machine lacks):\n";
    for (const auto &q : quantizedWeightRows(config.model)) {
        std::snprintf(line, sizeof(line), "  %-44s %12s  %s\n", q.format.c_str(), formatBytes(q.bytes).c_str(),
                      q.note.c_str());
        out << line;
    }
    return out.str();
}

std::string formatEstimateJson(const RunConfig &config, const MemoryEstimate &estimate, int64_t ranks)
{
    nlohmann::json out = {{"name", config.name},
                          {"precision", config.precision.mode},
                          {"peak_bytes", estimate.peakBytes}};
    for (const auto &r : estimate.roles)
        out["roles"].push_back({{"role", memoryRoleName(r.role)},
                                {"dtype", r.dtype},
                                {"bytes_per_element", r.bytesPerElement},
                                {"bytes", r.bytes},
                                {"note", r.note}});
    out["activations_from"] = estimate.source;
    if (config.model.source == ModelSource::Builtin)
        out["peak_phase"] = estimate.peakPhase.name();
    const DeviceTerms &device = estimate.device;
    out["device"] = {{"device", device.device},
                     {"chip", device.chip},
                     {"compute_capability", device.capability ? device.capability->text() : ""},
                     {"libtorch", device.libtorchVersion},
                     {"autocast_ops", device.autocastOps == AutocastOps::Cuda ? "cuda" : "cpu"},
                     {"workspace_bytes", device.workspaceBytes()},
                     {"workspace_source", device.workspaceSource},
                     {"allocation_granule_bytes", device.allocationGranuleBytes},
                     {"calibration", estimate.calibration},
                     {"not_known", device.unknown}};
    if (config.model.source != ModelSource::Builtin)
        return out.dump(2) + "\n";
    for (const auto &z : zeroSharding(config, ranks))
        out["zero"].push_back({{"stage", z.stage}, {"ranks", z.ranks}, {"bytes_per_rank", z.bytesPerRank}});
    for (const auto &q : quantizedWeightRows(config.model))
        out["quantized_weights"].push_back({{"format", q.format}, {"bytes", q.bytes}, {"note", q.note}});
    return out.dump(2) + "\n";
}

} // namespace optlog
