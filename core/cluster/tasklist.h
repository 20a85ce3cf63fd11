// SPDX-License-Identifier: MIT
#pragma once

#include "core/cluster/gather.h"
#include "core/store/store.h"

#include <string>

namespace optlog {

// The study's cluster tasks whose runs are not gathered yet, one row each: the run, its job and
// task, how it stands now as `statesOf` says (else as last seen, marked so), and a running run's
// last step, read from its shard. Empty when every task's run is gathered.
std::string formatPendingClusterTasks(const Store &study, const TaskStatesOf &statesOf);

} // namespace optlog
