// SPDX-License-Identifier: MIT
// Written to RankGroup's interface, NOT YET BUILT OR RUN: no GPU machine has compiled it.
#include "core/engine/distributed/collectives.h"

#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

namespace optlog {

c10::intrusive_ptr<CollectiveBackend> ncclGroup(const c10::intrusive_ptr<c10d::Store> &store, int rank, int size,
                                                std::chrono::milliseconds timeout)
{
    auto options = c10d::ProcessGroupNCCL::Options::create();
    options->timeout = timeout;
    return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, size, options);
}

} // namespace optlog
