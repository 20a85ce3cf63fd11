// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <string>

namespace optlog {

// What a run's memory is split into, in the order every table, chart and report shows them: the
// parts a peak is made of (model state, then activations), then the peaks.
enum class MemoryRole {
    Parameters,
    Gradients,
    MasterWeights,
    OptimizerState,
    CommunicationBuffers, // data parallel: the flat FP32 buckets gradients are reduced (and weights gathered) in
    SavedActivations,     // what autograd keeps from one microbatch's forward pass
    Temporaries,          // the rest of a step's peak: input batches, backward's transients
    Peak,                 // the allocator's high-water mark over complete steps after warm-up
    PeakReserved,         // CUDA: what the caching allocator held from the driver
    PeakRss,              // the process's high-water mark: libraries and buffers outside the allocator too
};
inline constexpr MemoryRole kMemoryRoles[] = {MemoryRole::Parameters,           MemoryRole::Gradients,
                                              MemoryRole::MasterWeights,        MemoryRole::OptimizerState,
                                              MemoryRole::CommunicationBuffers, MemoryRole::SavedActivations,
                                              MemoryRole::Temporaries,          MemoryRole::Peak,
                                              MemoryRole::PeakReserved,         MemoryRole::PeakRss};
// The roles a peak is the sum of: the first seven.
inline constexpr MemoryRole kPeakParts[] = {MemoryRole::Parameters,           MemoryRole::Gradients,
                                            MemoryRole::MasterWeights,        MemoryRole::OptimizerState,
                                            MemoryRole::CommunicationBuffers, MemoryRole::SavedActivations,
                                            MemoryRole::Temporaries};
bool isPeakPart(MemoryRole role);

const char *memoryRoleName(MemoryRole role);  // "saved_activations": as stored and exported
const char *memoryRoleLabel(MemoryRole role); // "saved activations": as tables and charts show it
std::optional<MemoryRole> memoryRoleNamed(const std::string &name);

// Where a memory figure comes from: the memory model, or the run's tensors and allocator.
enum class MemorySource { Predicted, Measured };
const char *memorySourceName(MemorySource source); // "predicted", "measured"
std::optional<MemorySource> memorySourceNamed(const std::string &name);

} // namespace optlog
