// SPDX-License-Identifier: MIT
// Runs that train on another machine reached over SSH (`optlog run --host`, docs/remote.md): where
// each one trains there, and its copy here, which following keeps up to date and which is replaced
// by the whole run once it has ended. Such a run is never judged dead by this machine's processes.
#pragma once

#include "core/store/store.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace optlog {

// Where a run trains on another machine reached over SSH (`optlog run --host`, docs/remote.md):
// the study it trains into on that machine's own disk (SQLite never crosses a network) and its id
// there. The study holding this place keeps a copy of the run, which following brings up to date.
struct RemotePlace
{
    std::string host;   // the SSH destination it was started through: "gpu-box", "me@10.0.0.7"
    std::string optlog; // the optlog command there
    std::string study;  // the study there, absolute on that machine
    int64_t runId = 0;  // the run's id in it
    std::string log;    // the engine's output there
};
struct RemoteRun
{
    int64_t runId = 0;      // the copy's id in this study
    RemotePlace place;      // place.runId 0 and place.log empty until the host answered the start
    std::string gatheredAt; // when the ended run was copied whole from there; empty: not yet
    std::string startKey;   // this machine's key for the start; the host starts a key's run once

    bool answered() const { return place.runId > 0; }
};

// The copy of a run about to be started on a host, stored before the start is asked, with the
// start's key: `run` gives its name, config, group, machine, pid and environment, and `place`
// names the host, its optlog and the study there (its run and log unknown yet). One transaction.
// Returns the copy's id.
int64_t createRemoteRun(Store &study, const RunRecord &run, const RemotePlace &place, const std::string &startKey);
// What the host answered to the copy's start: the run there (place.runId, place.log) and its
// record as the host made it (config, machine, pid, creation time, environment, group).
void answerRemoteStart(Store &study, int64_t runId, const RunRecord &started, const RemotePlace &place);
// Removes the copy of a run its host refused to start (never answered: nothing trains there),
// as if it had never been asked for. A copy the host answered is kept.
void forgetUnansweredRemoteRun(Store &study, int64_t runId);
std::vector<RemoteRun> remoteRuns(const Store &study); // oldest first
std::optional<RemotePlace> remotePlace(const Store &study, int64_t runId);
// Replaces the copy `runId` with the ended run `sourceRunId` of `source` (the study at its
// place, fetched), every row of it, keeping the copy's name, group and place. One transaction;
// refused as copyRunsFrom() refuses a run still running. Returns the new copy's id.
int64_t gatherRemoteRun(Store &study, const Store &source, int64_t sourceRunId, int64_t runId);
// Store::reopenRun for the copy of a run that its host resumed (engine `pid` on `machine`, its
// output in `log` there): the copy then holds what the run there holds, and follows it on from
// there. Already reopened under that engine: nothing changes.
void reopenRemoteRun(Store &study, int64_t runId, int64_t step, int64_t pid, const std::string &machine,
                     const std::string &log);

} // namespace optlog
