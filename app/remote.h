// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/runrequest.h"
#include "core/remote/hostlist.h"
#include "core/remote/hostprotocol.h"
#include "core/store/remoteruns.h"
#include "core/store/store.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <string>
#include <vector>

namespace optlog {

// Runs on another machine over SSH (docs/remote.md): what this side does (app/remotecommands.cpp)
// with what the host's optlog answers (app/hostcommands.cpp).

// A start's key (`optlog host start --key`): 32 hexadecimal digits from the system's random
// source, made by the side that asks, so that no two starts share one and the host can use it as
// a file name.
std::string newStartKey();
// Throws InputError for a key that is not one.
void requireStartKey(const std::string &key);

// What `optlog host describe` said about its machine. Throws InputError for a host that cannot be
// reached, has no optlog (at host.optlog), or speaks another event format, naming what would be right.
HostFacts describeHost(const HostEntry &host);

// `optlog host check NAME [--optlog CMD]`: remembered when it answers.
int hostCheckCommand(const std::string &name, const std::string &optlog);
// `optlog host setup NAME --python PATH [--wheel FILE | --sdist FILE]`: optlog installed into that
// environment (app/hostsetup.cpp), then checked and remembered as `host check` does.
struct HostSetupRequest
{
    std::string name;   // the SSH destination
    std::string python; // the interpreter there whose torch the engine links
    std::string wheel;  // a wheel to send; empty: the sdist
    std::string sdist;  // an sdist to send; empty: the one this optlog was packaged with
};
int hostSetupCommand(const HostSetupRequest &request, const std::string &self);
// The sdist the Debian package carries beside the optlog at `self`; empty where there is none.
std::string packagedSdist(const std::string &self);
// `optlog run --host NAME`.
int runOnHost(const RunRequest &request, const std::string &host);
// Whether run `name` (or id) of the study at `path` is the copy of a run on another machine.
bool trainsElsewhere(const std::string &path, const std::string &name);
// `optlog run --resume STUDY RUN` for such a run: resumed on its host from its newest checkpoint
// there, its copy here reopened at that step, then followed into it.
int resumeOnHost(const RunRequest &request, const std::string &studyPath, const std::string &name);
// Follows each run until it ends, at once (a thread each); the first exit code that is not 0.
int followRuns(const std::string &study, const std::vector<RemoteRun> &runs, bool jsonLines);
// Throws InputError, naming the study, the run and the value, where a run's stored host is not an
// SSH destination or its optlog command there is not one program. A study may come from someone
// else: follow, gather and cancel check every place it holds before they run anything.
void requireStoredPlaces(const Store &store);
// The study's runs on other machines whose copies have not ended (of `names` only, when given).
std::vector<RemoteRun> unfinishedRemoteRuns(const Store &store, const std::vector<std::string> &names);

struct RemoteGathering
{
    std::vector<int64_t> gathered;    // the copies' new ids
    int running = 0;                  // still training there
    std::vector<std::string> refused; // a run each, and why
};
// Each ended run on another machine not gathered yet, fetched whole and replacing its copy.
RemoteGathering gatherRemoteRuns(Store &store);
// Cancels the unfinished runs (of `names`, when given) on their hosts: how many; the hosts that
// could not be asked are added to `refused`.
int cancelRemoteRuns(const Store &store, const std::vector<std::string> &names, std::vector<std::string> &refused);

} // namespace optlog
