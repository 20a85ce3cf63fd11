// SPDX-License-Identifier: MIT
// What this machine asks a host's optlog over SSH (`optlog host VERB ...`), and what the host
// answers: the verbs, their arguments, the answers' JSON keys and the limits. Both sides build and
// read them here, the asking side (app/remotecommands.cpp, app/remotestarts.cpp,
// core/remote/followedrun.cpp) and the host's (app/hostcommands.cpp, app/engine/hostdescription.cpp),
// so that a changed word or key cannot compile on one side only. docs/remote.md describes them.
#pragma once

#include "core/remote/runstream.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace optlog {

// The command every request starts with, after the host's optlog program: `optlog host VERB`.
inline constexpr const char *kHostCommand = "host";

// The verbs the other side asks; `check` and `setup` are a person's, not the protocol's.
enum class HostVerb { Describe, Start, Stream, Cancel, Fetch, Resume };
const char *hostVerbName(HostVerb verb); // "describe", "start", ...
inline constexpr HostVerb kHostVerbs[] = {HostVerb::Describe, HostVerb::Start, HostVerb::Stream,
                                          HostVerb::Cancel,   HostVerb::Fetch, HostVerb::Resume};

// The requests' options, as both sides spell them.
namespace HostOption {
inline constexpr const char *kStudy = "--db";                 // start, stream, cancel, fetch, resume: the study there
inline constexpr const char *kRun = "--run";                  // stream, cancel, fetch, resume: the run's id there
inline constexpr const char *kKey = "--key";                  // start, resume: the start's key (newStartKey)
inline constexpr const char *kStudySeed = "--study-seed";     // start: the study's validation seed
inline constexpr const char *kConfigBytes = "--config-bytes"; // start: the config's size, sent on stdin
inline constexpr const char *kForce = "--force";              // start: train a run predicted not to fit
inline constexpr const char *kMetricsFrom = "--metrics-from"; // stream: where the copy here ends
inline constexpr const char *kValidationFrom = "--validation-from";
inline constexpr const char *kEventsFrom = "--events-from";
} // namespace HostOption

// Each request as the words after the host's optlog program (hostCommand quotes them for ssh).
std::vector<std::string> describeRequest();
std::vector<std::string> startRequest(const std::string &study, int64_t studySeed, const std::string &key,
                                      size_t configBytes, bool force);
std::vector<std::string> streamRequest(const std::string &study, int64_t runId, const CopyEnd &from);
std::vector<std::string> cancelRequest(const std::string &study, int64_t runId);
std::vector<std::string> fetchRequest(const std::string &study, int64_t runId);
std::vector<std::string> resumeRequest(const std::string &study, int64_t runId, const std::string &key);

// The exit code of `optlog host fetch` for a run still training there: nothing to gather yet.
inline constexpr int kExitStillRunning = 10;

// How long a run may take to start on its host (its data loaded, a first tuning probe) before it
// has a row: the host stops an engine that made none by then, and the asking side waits as long.
// And how long a follower goes on reconnecting to a host it cannot reach.
inline constexpr std::chrono::minutes kStartTimeout{30};
inline constexpr std::chrono::minutes kFollowerPatience{30};
// "30 min": a limit as its messages name it.
std::string minutesText(std::chrono::minutes limit);

// `host start`'s answer: the run the host's engine created for the config it was sent.
struct StartReply
{
    int64_t run = 0; // its id in the study there
    int64_t pid = 0; // the engine's
    std::string log; // the engine's output, there
    std::string name;
    std::string group;
    std::string configToml;
    std::string machine; // the host's name for itself
    std::string createdAt;
    std::string environmentJson;
};
// `host resume`'s answer: the engine that reopened the run, and the checkpoint's step it goes on after.
struct ResumeReply
{
    std::string key;
    int64_t pid = 0;
    std::string log;
    int64_t step = -1;
    std::string machine;
};
// `host describe`'s answer: what the host is and can do.
struct HostFacts
{
    std::string optlog; // its build, "optlog 0.1.0 (...)"
    int64_t eventFormat = 0;
    bool startKeys = false; // it answers `start --key` asked again with the same run
    int64_t schema = 0;     // its study schema
    std::string machine;
    std::string cpu;
    int64_t logicalCpus = 0;
    bool cudaBuilt = false;
    std::string cuda;                                // the CUDA runtime's version; empty where none
    std::vector<std::string> gpus;                   // one description each
    std::vector<std::pair<std::string, bool>> tuned; // precision family -> tuned there
    std::string hosted;                              // where it keeps the studies of runs from elsewhere
    int64_t freeBytes = 0;                           // free there
};

std::string toJsonText(const StartReply &reply);
std::string toJsonText(const ResumeReply &reply);
std::string toJsonText(const HostFacts &facts);
// Each throws nlohmann::json::exception for an answer without its keys ("not a run: is its
// optlog this one?" is the caller's to say). A describe's answer needs only event_format: the
// rest reads as unknown where an older optlog left it out.
StartReply startReplyFrom(const std::string &text);
ResumeReply resumeReplyFrom(const std::string &text);
HostFacts hostFactsFrom(const std::string &text);

// `optlog follow`'s lines for a person on its standard error, which the workbench reads:
// "optlog follow: " + text.
std::string followerLine(const std::string &text);
// The text of one of them; nullopt for a line that is not one.
std::optional<std::string> followerText(const std::string &line);

} // namespace optlog
