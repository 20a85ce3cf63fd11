// SPDX-License-Identifier: MIT
#include "core/config/configerror.h"
#include "core/engine/distributed/collectives.h"

namespace optlog {

c10::intrusive_ptr<CollectiveBackend> ncclGroup(const c10::intrusive_ptr<c10d::Store> &, int, int,
                                                std::chrono::milliseconds)
{
    throw ConfigError("runtime.device",
                      "config: runtime.device = \"cuda\" with distributed.ranks above 1 needs NCCL, "
                      "and this optlog is built against a LibTorch without CUDA; train the ranks on \"cpu\" (Gloo)");
}

} // namespace optlog
