// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"
#include "core/config/runrequest.h"
#include "core/engine/distributed/rendezvous.h"
#include "core/store/store.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace optlog {

class EngineRun;

// The stored run `--from STUDY:RUN` names (split at the last colon: a path may hold one), read
// without writing its study.
struct SourceRun
{
    RunOrigin origin;
    std::string configToml;
};
SourceRun sourceRunOf(const std::string &from);

// The run `--resume` continues, and the checkpoint it goes on from: a run of the request's study
// that ended without completing (cancelled or crashed; not diverged or out of memory, which would
// end the same way again), whose last checkpoint's file is whole and fits its config.
struct Resumption
{
    RunRecord run;
    WeightFile checkpoint;
};
Resumption resumptionOf(const RunRequest &request);

// The request resolved, once, before anything is written: the config it asks for and where that
// came from. The rest of `optlog run` (its relaunch, the derived run's name, replicates, the engine
// run) reads this value; no source study is opened again.
struct ResolvedRun
{
    RunConfig config;                     // defaults, preset, file and overrides; or --from's stored config and the
                                          // overrides; or --resume's own
    std::optional<SourceRun> source;      // --from: the stored run it starts from
    std::optional<Resumption> resumption; // --resume: the run and the checkpoint it goes on from
};
ResolvedRun resolveRun(const RunRequest &request);

// The engine run `resolved` asks for, not yet opened, linked to the run it was made from or set to
// continue its checkpoint. Refuses a run predicted not to fit unless `force`.
std::unique_ptr<EngineRun> engineRunFor(const ResolvedRun &resolved, bool force);

// Rank 0 of a data-parallel run (`config` has distributed.ranks > 1, or the request names a
// rendezvous): the rendezvous it serves, a free port on the loopback or --rendezvous for ranks on
// other machines, with the world size the config and the options agree on. None for a run on one rank.
std::optional<Rendezvous> rankZeroRendezvous(const RunRequest &request, const RunConfig &config);
// A rank other than 0 (--rank 1 and above): the rendezvous it joins. The run comes from rank 0,
// so a config, a study, a source or repeats are refused.
Rendezvous joinedRankRendezvous(const RunRequest &request);

} // namespace optlog
