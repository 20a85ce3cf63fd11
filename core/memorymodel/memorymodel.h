// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"
#include "core/contract/measurements.h"
#include "core/contract/memorytimeline.h"
#include "core/memorymodel/deviceterms.h"
#include "core/memorymodel/shardlayout.h"

#include <cstdint>
#include <string>
#include <vector>

namespace optlog {

// One role's predicted bytes, with the dtype the role holds and its bytes per element.
struct RoleEstimate
{
    MemoryRole role;
    std::string dtype;
    double bytesPerElement = 0; // 0 where a role mixes dtypes
    int64_t bytes = 0;
    std::string note; // what the figure counts, in a few words
};

struct MemoryEstimate
{
    std::vector<RoleEstimate> roles;         // parameters, gradients, master_weights, optimizer_state,
                                             // saved_activations, temporaries
    int64_t peakBytes = 0;                   // the sum: the counting allocator's peak over a complete step
    bool activationsPredicted = true;        // false: the model state only, and no peak (modelStateEstimate)
    int64_t parameters = 0;                  // elements of the model's parameters
    std::string source = "the memory model"; // or what predicted the activations instead
    DeviceTerms device;                      // what the figures assume of the device
    std::string calibration;                 // the device calibration that corrected them; empty: none
    // Where in a steady step the peak falls, as a memory timeline names its phases ("backward,
    // block 3"): the highest point of the model's walk through the step. Only where activations
    // are predicted.
    struct Phase
    {
        StepPart part = StepPart::Backward;
        int64_t block = TimelinePhase::kLossBlock;
        std::string name() const { return TimelinePhase{part, block}.name(); }
    };
    Phase peakPhase;
    const RoleEstimate *find(MemoryRole role) const;
    // The roles that are not activations (model state, data parallel's buffers): exact, the same
    // in every step.
    int64_t stateBytes() const;
    // The estimate as study rows (source predicted), the peak last: stored with a run before it
    // trains, so the prediction is there at once, and beside the measurement after.
    std::vector<MemoryRow> rows() const;
};

// The analytic memory model of optlog's GPT for one run config: the tensors LibTorch 1.13 keeps
// for backward in this model's operations (embeddings, LayerNorms, QKV, the T x T attention
// scores and their softmax, MLP and GELU, logits and cross-entropy), in each mode's dtypes, and
// how checkpointing and chunked attention change them. docs/memory-model.md derives each term.
// With distributed.ranks > 1 the figures are one rank's (`rank`): ZeRO's shards differ between
// ranks by the padding of the last part.
// The device's terms (autocast's op list, workspaces, rounding) are `device`'s; without them, those
// assumedDeviceTerms() gives for runtime.device.
// A TorchScript model (ModelSource::TorchScript) has no such closed form: it throws ConfigError.
MemoryEstimate estimateMemory(const RunConfig &config, const DeviceTerms &device, int64_t rank = 0);
MemoryEstimate estimateMemory(const RunConfig &config, int64_t rank = 0);

// The roles that follow exactly from a model's parameter sizes (each tensor's elements, in the
// model's order) and the precision table: parameters, gradients, master weights, optimizer state,
// and data parallel's buffers and ZeRO's shards. For a model whose activations have no closed
// form here: no saved activations, temporaries or peak.
MemoryEstimate modelStateEstimate(const RunConfig &config, const std::vector<int64_t> &parameterSizes, int64_t rank = 0);

// Data parallel: collectives run on FP32 buckets of distributed.bucket_mib.
inline constexpr int64_t kCommunicationBytesPerElement = 4;
ShardLayout shardLayoutOf(const RunConfig &config);
// The same for a model of these parameter sizes (a TorchScript module's).
ShardLayout shardLayoutOf(const RunConfig &config, const std::vector<int64_t> &parameterSizes);

// One microbatch's token tensors, its int64 inputs and targets: a step of accumulation holds every
// microbatch's.
inline int64_t microbatchTokenBytes(int64_t microbatch, int64_t context)
{
    return 2 * microbatch * context * int64_t(sizeof(int64_t));
}

// Korthikanti et al. (2022): 34·s·b·h + 5·a·s²·b bytes of activations per layer, which assumes
// 16-bit activations and dropout masks; a cross-check, not the model.
int64_t korthikantiActivationBytes(const ModelConfig &model, int64_t microbatch);

// Model-state bytes of ZeRO stage 1, 2 or 3 over `ranks` data-parallel ranks, per rank:
// stage 1 shards the optimizer state (and master weights), 2 also the gradients, 3 also the weights.
struct ShardedModelState
{
    int stage = 0;
    int64_t ranks = 1;
    int64_t bytesPerRank = 0;
};
std::vector<ShardedModelState> zeroSharding(const RunConfig &config, int64_t ranks);

// Weight bytes of the same model stored in FP8 or in 4-bit groups with a 16-bit scale per group:
// estimates for hardware and kernels this machine lacks.
struct QuantizedWeights
{
    std::string format;
    int64_t bytes = 0;
    std::string note;
};
std::vector<QuantizedWeights> quantizedWeightRows(const ModelConfig &model, int64_t groupSize = 128);

// `optlog estimate`: the roles with their dtypes, the cross-check, ZeRO over `ranks` and the
// other weight formats, as text and as JSON.
std::string formatEstimate(const RunConfig &config, const MemoryEstimate &estimate, int64_t ranks);
std::string formatEstimateJson(const RunConfig &config, const MemoryEstimate &estimate, int64_t ranks);

} // namespace optlog
