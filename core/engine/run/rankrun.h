// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"
#include "core/contract/measurements.h"
#include "core/contract/outcome.h"
#include "core/engine/distributed/rankgroup.h"

#include <atomic>
#include <string>
#include <vector>

namespace optlog {

// How the ranks of a data-parallel run talk besides the collectives, through the rendezvous
// store: rank 0 publishes the run (its config and the study's seed) before the others join, and
// each other rank publishes its report when its training ends. Only rank 0 writes the study.

void publishRunForRanks(RankGroup &ranks, const RunConfig &config, uint64_t studySeed);

// What a rank other than 0 reports: its record (host, pid, environment, step times, outcome) and
// its memory measured by role.
struct RankReport
{
    RankRecord record;
    std::vector<MemoryRow> measuredMemory;
};
// Rank 0 reads rank `rank`'s report, waiting up to the group's timeout when the run `completed`
// (every rank then reports) and briefly otherwise; a rank that never reported is recorded as
// crashed.
RankReport readRankReport(RankGroup &ranks, int64_t rank, bool completed);

// A rank other than 0, from joining to reporting: takes the run from the store, trains its share
// of it with the others and publishes its report. Returns how its training ended.
Outcome runRank(RankGroup &ranks, const std::atomic<bool> &stopRequested);

} // namespace optlog
