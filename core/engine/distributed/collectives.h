// SPDX-License-Identifier: MIT
// Inside the engine only: the c10d type a RankGroup runs its collectives on, which LibTorch 2.x
// calls a Backend (ProcessGroupGloo and ProcessGroupNCCL derive from it) and 1.13 a ProcessGroup.
#pragma once

#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/version.h>

#include <chrono>

#if TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/distributed/c10d/Backend.hpp>
#else
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#endif

namespace optlog {

#if TORCH_VERSION_MAJOR >= 2
using CollectiveBackend = c10d::Backend;
#else
using CollectiveBackend = c10d::ProcessGroup;
#endif

// NCCL's group for ranks on CUDA: only in a build against a CUDA LibTorch with NCCL
// (collectives_nccl.cpp); elsewhere it refuses with ConfigError (collectives_none.cpp).
c10::intrusive_ptr<CollectiveBackend> ncclGroup(const c10::intrusive_ptr<c10d::Store> &store, int rank, int size,
                                                std::chrono::milliseconds timeout);

} // namespace optlog
