// SPDX-License-Identifier: MIT
// estimateMemory's steps (memorymodel.cpp), each apart so that it reads alone: what a microbatch's
// forward saves, the backward's highest point over it, and the device's own bytes. Private to
// optlog_memorymodel.
#pragma once

#include "core/config/config.h"
#include "core/contract/precisionmodes.h"
#include "core/memorymodel/deviceterms.h"
#include "core/memorymodel/memorymodel.h"

#include <cstdint>

namespace optlog {

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

// What every step shares: the run's sizes as numbers, its dtypes and how its attention runs.
struct ForwardShape
{
    ForwardShape(const RunConfig &config, const DeviceTerms &device);
    const RunConfig &config;
    const DeviceTerms &device;
    const PrecisionMode &mode;
    Dtypes d;
    double B, T, C, H, V, BTC; // microbatch, context, width, heads, vocabulary; B·T·C
    bool dropout;
    bool chunked; // attention in chunks of memory.attention_chunk queries (shorter than T)
    bool fused;   // a fused (flash-style) kernel
    double chunks;
    // Bytes of the CPU generator's state, saved per checkpoint: a CPU tensor, so on a GPU it is not
    // in the device's memory.
    double generatorState;
    bool isCheckpointed(int64_t block) const;
    // Scratch a BF16 product takes through the allocator while it runs (deviceterms.h: FP32 copies
    // of its output where oneDNN's BF16 matmul lacks native BF16); none elsewhere.
    double productScratch(double outputElements, double batches = 1) const;
};

// What autograd keeps from one microbatch's forward pass, by part, in bytes.
struct SavedTensors
{
    double attention = 0;         // one block's attention, not checkpointed
    double mlp = 0;               // what the MLP half of a block keeps; freed first in backward
    double attentionHalf = 0;     // the attention half with its LayerNorm and projection input
    double block = 0;             // a block that is not checkpointed, its weight casts included
    double checkpointedBlock = 0; // a checkpointed block: its output alone
    double head = 0;              // the final LayerNorm, the head and the loss
    double total = 0;             // the whole forward's, every block and the embedding's
};
SavedTensors savedTensors(const ForwardShape &s);

// The highest point of (still saved + transient) while backward walks from the loss freeing each
// part's saved tensors, and the phase of a step's memory timeline it falls in. `parameters`: the
// model's elements; `shard`: this rank's under ZeRO.
struct BackwardPeak
{
    double highest = 0;
    MemoryEstimate::Phase phase;
};
BackwardPeak backwardPeak(const ForwardShape &s, const SavedTensors &saved, int64_t parameters, int64_t shard);

// The device's own bytes: the product libraries' workspaces (held once made), and the allocator's
// rounding of the model state's tensors.
struct DeviceOverhead
{
    int64_t workspaces = 0;
    int64_t rounding = 0;
};
DeviceOverhead deviceOverhead(const ForwardShape &s);

} // namespace optlog
