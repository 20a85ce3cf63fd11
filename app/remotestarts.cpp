// SPDX-License-Identifier: MIT
// Starting and resuming a run on a host, asked until the host answers (docs/remote.md, "A start
// that survives its lost answer"): this side of `optlog host start` and `optlog host resume`.
#include "app/remotestarts.h"

#include "app/remote.h"
#include "core/config/cachefile.h"
#include "core/contract/format.h"
#include "core/contract/outcome.h"
#include "core/contract/privatefolder.h"
#include "core/remote/hostlist.h"
#include "core/remote/sshclient.h"
#include "core/store/remoteruns.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <thread>

namespace optlog {

namespace {

// The starts this machine asked for and has no answer to yet, by key, in its data folder
// ($XDG_DATA_HOME/optlog/asked-starts.json).
std::string askedStartsFile()
{
    return studyFilePath("asked-starts.json");
}

// Runs `command` (`optlog host start` or `resume`) on `place`'s host once, with `input` as its
// standard input, and reads its answer into a StartAnswer with `read` (which throws
// nlohmann::json::exception for an answer that is not one).
StartAnswer askHost(const RemotePlace &place, const std::vector<std::string> &command, const std::string &input,
                    const std::function<void(const std::string &, StartAnswer &)> &read)
{
    StartAnswer out;
    out.place = place;
    out.said = SshClient(place.host).run(hostCommand(place.optlog, command), kStartTimeout, input);
    if (connectionFailed(out.said))
        return out;
    out.kind = StartAnswer::Kind::Refused;
    if (out.said.exitCode != 0)
        return out;
    try {
        read(out.said.out, out);
        out.kind = StartAnswer::Kind::Started;
    } catch (const nlohmann::json::exception &) {
        out.said.exitCode = kExitFailed;
        out.said.err = place.host + " answered \"" + printable(out.said.out.substr(0, 120))
                       + "\", not a run: is its optlog this one?\n";
    }
    return out;
}

// Asks `copy`'s host once to start it, with the copy's key and its config.
StartAnswer askStart(const RemoteRun &copy, const std::string &configToml, int64_t studySeed, bool force)
{
    const PrivateFolder folder("optlog-host-config"); // the config is the start command's input
    const std::string configFile = folder.file("run.toml");
    std::ofstream(configFile) << configToml;
    // Its size goes in the command, so that a config cut short with the connection is refused there.
    const std::vector<std::string> command = startRequest(copy.place.study, studySeed, copy.startKey, configToml.size(),
                                                          force);
    return askHost(copy.place, command, configFile, [](const std::string &answer, StartAnswer &out) {
        const StartReply reply = startReplyFrom(answer);
        out.place.runId = reply.run;
        out.place.log = reply.log;
        out.run.name = reply.name;
        out.run.group = reply.group;
        out.run.configToml = reply.configToml;
        out.run.host = reply.machine;
        out.run.pid = reply.pid;
        out.run.createdAt = reply.createdAt;
        out.run.environmentJson = reply.environmentJson;
    });
}

// Asks `copy`'s host once to resume its run from the run's newest checkpoint there; `key` is this
// resume's, the same each time it is asked again.
StartAnswer askResume(const RemoteRun &copy, const std::string &key)
{
    return askHost(copy.place, resumeRequest(copy.place.study, copy.place.runId, key), "",
                   [](const std::string &answer, StartAnswer &out) {
                       const ResumeReply reply = resumeReplyFrom(answer);
                       out.place.log = reply.log;
                       out.run.pid = reply.pid;
                       out.run.host = reply.machine;
                       out.step = reply.step;
                   });
}

// Asks with `ask` until the host answers or refuses: a lost answer is asked again, and the host
// starts a key's run, or resumes a run, once. Lost after kStartTimeout without an answer, or when
// a stop is asked. `what`: "the start of run 3", for `say`.
StartAnswer askUntilAnswered(const RemoteRun &copy, const std::string &what, const std::function<StartAnswer()> &ask,
                             const Say &say, const std::atomic<bool> &stop)
{
    const auto since = std::chrono::steady_clock::now();
    for (int attempt = 1;; ++attempt) {
        const StartAnswer answer = ask();
        if (answer.kind != StartAnswer::Kind::Lost || stop.load()
            || std::chrono::steady_clock::now() - since > kStartTimeout)
            return answer;
        say("no answer from " + copy.place.host + " to " + what + " (" + sshSaid(answer.said)
            + "); asking again: the host does it once");
        const auto pause = std::chrono::seconds(std::min(5, attempt));
        for (auto waited = std::chrono::milliseconds(0); waited < pause && !stop.load();
             waited += std::chrono::milliseconds(200))
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
}

} // namespace

void rememberAskedStart(const std::string &key)
{
    updateJsonCache(askedStartsFile(), [&](nlohmann::json &keys) { keys[key] = utcNow(); });
}

bool askedHere(const std::string &key)
{
    return readJsonCache(askedStartsFile()).contains(key);
}

void forgetAskedStart(const std::string &key)
{
    updateJsonCache(askedStartsFile(), [&](nlohmann::json &keys) { keys.erase(key); });
}

// Asks until the host answers the start of `copy` (then stored in `study`) or refuses it.
StartAnswer startUntilAnswered(Store &study, const RemoteRun &copy, bool force, const Say &say,
                               const std::atomic<bool> &stop)
{
    const std::string config = study.requireRun(copy.runId).configToml;
    const StartAnswer answer = askUntilAnswered(
        copy, "the start of run " + std::to_string(copy.runId),
        [&] { return askStart(copy, config, study.studySeed(), force); }, say, stop);
    if (answer.kind == StartAnswer::Kind::Started) {
        answerRemoteStart(study, copy.runId, answer.run, answer.place);
        forgetAskedStart(copy.startKey); // answered: there is nothing more to ask
    }
    return answer;
}

StartAnswer resumeUntilAnswered(const RemoteRun &copy, const std::string &label, const Say &say,
                                const std::atomic<bool> &stop)
{
    const std::string key = newStartKey(); // this resume's, asked again with it
    return askUntilAnswered(
        copy, "the resume of " + label, [&] { return askResume(copy, key); }, say, stop);
}

} // namespace optlog
