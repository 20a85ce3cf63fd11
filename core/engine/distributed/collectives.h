// SPDX-License-Identifier: MIT
// Inside the engine only: NCCL's process group, built where LibTorch has CUDA.
#pragma once

#include "core/engine/compat/torchcompat.h"

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>

namespace optlog {

// The c10d type a RankGroup runs its collectives on (its name differs by version: torchcompat.h).
using compat::CollectiveBackend;

// NCCL's group for ranks on CUDA: only in a build against a CUDA LibTorch with NCCL
// (collectives_nccl.cpp); elsewhere it refuses with ConfigError (collectives_none.cpp).
c10::intrusive_ptr<CollectiveBackend> ncclGroup(const c10::intrusive_ptr<c10d::Store> &store, int rank, int size,
                                                std::chrono::milliseconds timeout);

} // namespace optlog
