// SPDX-License-Identifier: MIT
#pragma once

#include "core/contract/engineevents.h"
#include "core/contract/outcome.h"
#include "core/remote/hostprotocol.h"
#include "core/store/remoteruns.h"
#include "core/store/store.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <string>

namespace optlog {

// How following a run on a host ended.
struct FollowResult
{
    enum class End {
        Finished,  // the run ended there, and its copy here holds every row and the outcome
        Stopped,   // asked to stop following; the run goes on there
        Refused,   // the host or its stream could not be read (no optlog there, garbage): exit 2
        GaveUp,    // no connection for the whole of FollowOptions::giveUpAfter; the run may go on there
        Elsewhere, // another follower (another optlog, the workbench) keeps this copy up to date
    };
    End end = End::Refused;
    Outcome outcome = Outcome::Crashed; // Finished: the run's
    std::string message;                // the outcome's message, or why it was refused or given up
    int64_t lastStep = -1;              // the last step the copy holds
};

struct FollowOptions
{
    // A line for a person: following, "connection to NAME lost, reconnecting; last row at step N",
    // reconnected. May be empty.
    std::function<void(const std::string &)> status;
    // Each event once its rows are stored here (`--jsonl` prints them for the workbench). May be empty.
    std::function<void(const EngineEvent &)> stored;
    const std::atomic<bool> *stop = nullptr;              // set: stop following (Ctrl-C); the run goes on
    std::chrono::seconds giveUpAfter = kFollowerPatience; // without any connection
    std::chrono::milliseconds flushEvery{200};
};

// Keeps the copy `run` of this study up to date with the run at its place on the host: reads the
// host's `optlog host stream` over SSH from where the copy ends, stores each row as the host
// stored it (the same events, times and order; no detection of its own, which the host's engine
// did), and after a dropped connection connects again and goes on from the copy's end, until the
// run has ended there. One follower per copy at a time: a lock on the run's byte of the file
// <study>.followers, so that two followers never store a row twice. Throws StoreError when this
// study stops taking rows.
FollowResult followRemoteRun(Store &store, const RemoteRun &run, const FollowOptions &options);

} // namespace optlog
