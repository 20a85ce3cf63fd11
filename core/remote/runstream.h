// SPDX-License-Identifier: MIT
#pragma once

#include "core/store/store.h"

#include <chrono>
#include <cstdint>

namespace optlog {

// Where a copy of a run ends: how many of each kind of the run's rows it holds. Following goes
// on from there, so that after a dropped connection no row is sent twice or left out.
struct CopyEnd
{
    int64_t metrics = 0;
    int64_t validation = 0;
    int64_t events = 0;
};
// The end of run `runId`'s copy in `store`.
CopyEnd copyEnd(const Store &store, int64_t runId);

// On the host: run `runId` of `store` written on `fd` as event lines (format 1, docs/events.md)
// from `from` on, while its engine trains: a started line first (with the run's environment), then
// each row as it is stored (the engine's start message as a started line of its own),
// the memory table whenever it changes, and a finished line (with the outcome's time and the
// run's final environment) once the run has ended, or its engine is found gone (crashed, as
// opening the study marks it). Asks the study every `interval`. Returns true after the finished
// line, false when the reader went away first (the connection dropped). Throws StoreError.
bool streamRun(Store &store, int64_t runId, const CopyEnd &from, int fd, std::chrono::milliseconds interval);

} // namespace optlog
