// SPDX-License-Identifier: MIT
#include "core/memorymodel/memorymodel.h"

#include "core/config/configerror.h"
#include "core/contract/format.h"
#include "core/memorymodel/activationmemory_p.h"
#include "core/memorymodel/modelshape.h"
#include "core/memorymodel/shardlayout.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace optlog {

namespace {

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
    const ForwardShape shape(config, device);
    MemoryEstimate e = modelStateEstimate(config, parameterSizes(config.model), rank);
    e.device = device;
    e.activationsPredicted = true;
    e.peakBytes = 0;

    const SavedTensors saved = savedTensors(shape);
    e.roles.push_back({MemoryRole::SavedActivations, "mixed", 0, int64_t(saved.total),
                       "what autograd keeps from one microbatch's forward pass"});

    // Temporaries: the highest point of (still saved + transient) through backward, over the saved
    // total at the end of the forward, with the step's batches and the device's own bytes.
    const BackwardPeak backward = backwardPeak(shape, saved, parameterCount(config.model),
                                               shardLayoutOf(config).shardElements(rank));
    e.peakPhase = backward.phase;
    const double batches = double(config.train.accumulation
                                  * microbatchTokenBytes(config.train.microbatch, config.model.contextLength));
    const DeviceOverhead own = deviceOverhead(shape);
    const double temporaries = batches + std::max(0.0, backward.highest - saved.total)
                               + double(own.workspaces + own.rounding);
    std::string note = "the step's input batches and the highest transient of backward";
    if (own.workspaces > 0)
        note += "; " + formatBytes(own.workspaces) + " of cuBLAS workspaces";
    if (own.rounding > 0)
        note += "; " + formatBytes(own.rounding) + " of the allocator's rounding of the model state";
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
