// SPDX-License-Identifier: MIT
// Runs on another machine reached over SSH, from this side (docs/remote.md): `optlog host check`,
// `optlog run --host`, `optlog follow`, and the remote runs of `optlog gather` and `optlog cancel`.
// What runs on the host is in app/hostcommands.cpp.
#include "app/commands.h"
#include "app/remote.h"
#include "app/remotestarts.h"
#include "core/config/configerror.h"
#include "core/contract/engineevents.h"
#include "core/contract/format.h"
#include "core/contract/inputerror.h"
#include "core/contract/privatefolder.h"
#include "core/contract/program.h"
#include "core/remote/followedrun.h"
#include "core/remote/hostlist.h"
#include "core/remote/hostplaces.h"
#include "core/remote/sshclient.h"
#include "core/store/remoteruns.h"
#include "core/store/store.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <mutex>
#include <thread>
#include <utility>

#include <unistd.h>

namespace optlog {

namespace {

std::atomic<bool> g_stopFollowing{false};

// Ctrl-C stops following; the run goes on on its host (`optlog cancel` stops it there).
void stopFollowingOnSignals()
{
    struct sigaction action
    { };
    action.sa_handler = [](int) { g_stopFollowing.store(true); };
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
    std::signal(SIGPIPE, SIG_IGN);
}

// An InputError saying why `result` of a command on `host` went wrong: unreachable, no optlog, or
// what the optlog there refused.
[[noreturn]] void refuseHostAnswer(const HostEntry &host, const ProgramOutput &result, const std::string &doing)
{
    if (connectionFailed(result))
        throw InputError(unreachableMessage(host.name, result));
    if (result.exitCode == 127 && onPath("ssh").empty())
        throw InputError("cannot reach " + host.name
                         + ": ssh is not installed on this machine (install OpenSSH's "
                           "client: apt install openssh-client)");
    if (result.exitCode == 127 || result.exitCode == 126)
        throw InputError(host.name + " has no optlog at `" + host.optlog + "` (" + sshSaid(result)
                         + "): install optlog there, or name its path with `"
                         + pasteableCommand({"optlog", "host", "check", host.name}) + " --optlog PATH`");
    throw InputError(host.name + " could not " + doing + ": " + sshSaid(result));
}

HostEntry hostEntry(const std::string &name)
{
    requireDestination(name);
    return rememberedHost(name).value_or(HostEntry{name, "optlog"});
}

// Puts `file` into the host's files folder, unless it is there already (sent before, unchanged
// since); a folder file by file. Written under a .part name and then renamed, so that a send cut
// short is never taken for the file. Returns why it failed; empty when it did not.
std::string sendFile(const SshClient &client, const SentFile &file, const std::string &hostedFolder)
{
    const std::string target = hostedFolder + "/files/" + file.name;
    if (client.run("test -e " + shellQuoted(target), std::chrono::seconds(60)).exitCode == 0)
        return {};
    std::cerr << "optlog run: sending " << file.local << " to " << client.destination() << "\n";
    std::vector<std::pair<std::string, std::string>> parts; // a local file, its path there
    if (file.folder) {
        for (const auto &entry : std::filesystem::directory_iterator(file.local))
            if (entry.is_regular_file())
                parts.emplace_back(entry.path().string(), target + ".part/" + entry.path().filename().string());
    } else {
        parts.emplace_back(file.local, target + ".part");
    }
    for (const auto &[local, remote] : parts) {
        const std::string folder = remote.substr(0, remote.rfind('/'));
        const ProgramOutput sent = client.run("mkdir -p " + shellQuoted(folder) + " && cat > " + shellQuoted(remote),
                                              std::chrono::seconds(3600), local);
        if (sent.exitCode != 0)
            return "cannot send " + local + " to " + client.destination() + ": " + sshSaid(sent);
    }
    const ProgramOutput moved = client.run("mv " + shellQuoted(target + ".part") + " " + shellQuoted(target),
                                           std::chrono::seconds(60));
    return moved.exitCode == 0 ? std::string() : "cannot place " + target + " there: " + sshSaid(moved);
}

// A start asked again by `optlog follow` that did not start: refused by the host (the copy ends
// failed, with its words: nothing trains there) or still unanswered (kept, to be asked again).
// The exit code.
int endUnstarted(Store &study, const RemoteRun &copy, const StartAnswer &answer, const std::string &label)
{
    if (answer.kind == StartAnswer::Kind::Refused) {
        const std::string why = copy.place.host + " refused to start it: " + sshSaid(answer.said);
        study.finishRun(copy.runId, Outcome::Failed, -1, why);
        forgetAskedStart(copy.startKey);
        std::cerr << label << why << "\n";
        return kExitBadInput;
    }
    if (g_stopFollowing.load())
        return kExitOk;
    std::cerr << label << "no answer from " << copy.place.host << " to its start (" << sshSaid(answer.said) << "); `"
              << pasteableCommand({"optlog", "follow", study.path()}) << "` asks again\n";
    return kExitFailed;
}

// Says on stderr how following a run on `host` into `studyPath` ended (each line begins with
// `label`): the exit code for it.
int reportFollowEnd(const FollowResult &result, const std::string &label, const std::string &host,
                    const std::string &studyPath)
{
    switch (result.end) {
    case FollowResult::End::Finished:
        std::cerr << label << outcomeName(result.outcome) << (result.message.empty() ? "" : ": " + result.message)
                  << " (on " << host << ", up to step " << result.lastStep << ") -> " << studyPath << "\n";
        return exitCodeFor(result.outcome);
    case FollowResult::End::Stopped:
        std::cerr << label << "stopped following at step " << result.lastStep << "; it goes on on " << host << " (`"
                  << pasteableCommand({"optlog", "follow", studyPath}) << "` follows it again)\n";
        return kExitOk;
    case FollowResult::End::Refused: std::cerr << label << result.message << "\n"; return kExitBadInput;
    case FollowResult::End::Elsewhere:
        std::cerr << label << "another optlog follows it already (the workbench, or `optlog follow`)\n";
        return kExitOk;
    case FollowResult::End::GaveUp:
        std::cerr << label << result.message << "; `" << pasteableCommand({"optlog", "follow", studyPath})
                  << "` tries again\n";
        return kExitFailed;
    }
    return kExitOk; // not reached: every end is above
}

} // namespace

HostFacts describeHost(const HostEntry &host)
{
    const SshClient client(host.name);
    const ProgramOutput result = client.run(hostCommand(host.optlog, describeRequest()), std::chrono::seconds(60));
    if (result.exitCode != 0) {
        // An optlog too old to have `host describe` says it does not know the word.
        if (result.exitCode == kExitBadInput && result.err.find("unknown command") != std::string::npos)
            throw InputError(host.name + "'s optlog (`" + host.optlog + "`) predates running runs for other "
                             + "machines (no `optlog host`): update it there");
        refuseHostAnswer(host, result, "describe itself");
    }
    HostFacts out;
    try {
        out = hostFactsFrom(result.out);
    } catch (const nlohmann::json::exception &) {
        throw InputError(host.name + "'s `" + host.optlog + " host describe` did not answer with a description ("
                         + printable(result.out.substr(0, 80)) + "): is it optlog?");
    }
    if (out.eventFormat != kEventFormat)
        throw InputError(host.name + "'s optlog writes event format " + std::to_string(out.eventFormat)
                         + ", and this optlog reads format " + std::to_string(kEventFormat)
                         + " (docs/events.md): install the same optlog on both machines");
    if (!out.startKeys)
        throw InputError(host.name + "'s optlog (`" + host.optlog + "`) predates starts that survive a lost answer "
                         + "(`optlog host start --key`): install the same optlog on both machines");
    if (out.hosted.empty() || out.hosted.front() != '/')
        throw InputError(host.name + "'s optlog named no folder for its studies: is it optlog?");
    return out;
}

int hostCheckCommand(const std::string &name, const std::string &optlog)
{
    HostEntry host;
    HostFacts d;
    const auto start = std::chrono::steady_clock::now();
    if (const int refused = refuseBadInput("host check", [&] {
            host = hostEntry(name);
            if (!optlog.empty())
                host.optlog = optlog;
            d = describeHost(host);
        }))
        return refused;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rememberHost(host);
    char took[32];
    std::snprintf(took, sizeof took, "%.1f s", seconds);
    std::cout << host.name << ": reachable (`ssh " << host.name << "`, " << took << "), its machine " << d.machine
              << "\n";
    std::cout << "  " << d.optlog << "; event format " << d.eventFormat << ", study schema " << d.schema << "\n";
    std::cout << "  CPU: " << d.cpu << ", " << d.logicalCpus << " logical CPUs\n";
    if (d.gpus.empty())
        std::cout << "  GPU: none " << (d.cudaBuilt ? "visible (CUDA build)" : "(a CPU build)") << "\n";
    for (size_t i = 0; i < d.gpus.size(); ++i)
        std::cout << "  GPU " << i << ": " << d.gpus[i] << (d.cuda.empty() ? "" : ", CUDA " + d.cuda) << "\n";
    std::string tuned;
    for (const auto &[family, yes] : d.tuned)
        tuned += (tuned.empty() ? "" : ", ") + family + (yes ? " yes" : " no");
    std::cout << "  tuned: " << tuned << " (`optlog tune` there measures the rest)\n";
    std::cout << "  studies in " << d.hosted << ": " << formatBytes(d.freeBytes) << " free\n";
    return kExitOk;
}

// `optlog run --host`: the config resolved here, its files and itself sent, the engine started
// detached there (its pre-flight's refusal is this command's), the run's copy made here, followed.
int runOnHost(const RunRequest &request, const std::string &name)
{
    stopFollowingOnSignals();
    HostEntry host;
    HostFacts description;
    RunConfig config;
    std::vector<SentFile> files;
    std::unique_ptr<Store> study;
    if (const int refused = refuseBadInput("run", [&] {
            if (!request.from.empty() || !request.resume.empty() || request.repeats != 1 || !request.rendezvous.empty())
                throw ConfigError("--host runs one new run: --from, --resume, --repeats and --rendezvous are for "
                                  "runs here (run them on the host itself)");
            host = hostEntry(name);
            config = loadRunConfig(request.preset, request.configFile, request.overrides);
            study = std::make_unique<Store>(request.study);
            if (const auto existing = study->findRun(config.name); existing && existing->name == config.name)
                throw StoreError("the study already has a run named \"" + config.name + "\" (run "
                                 + std::to_string(existing->id) + "): name this one with --set name=...");
            description = describeHost(host);
            files = filesToSend(config, description.hosted);
        }))
        return refused;
    const SshClient client(host.name);
    for (const SentFile &file : files)
        if (const std::string failed = sendFile(client, file, description.hosted); !failed.empty()) {
            std::cerr << "optlog run: " << failed << "; nothing was started\n";
            return kExitBadInput;
        }
    // The copy first, with the start's key: whatever happens to the answer, this study knows the run.
    RemoteRun remote;
    remote.place = {host.name, host.optlog, description.hosted + "/" + hostedStudyName(request.study), 0, ""};
    remote.startKey = newStartKey();
    RunRecord copy;
    copy.name = config.name;
    copy.group = config.group;
    copy.configToml = toToml(config); // what the host trains is what was resolved here
    copy.host = host.name;
    if (const int refused = refuseBadInput("run", [&] {
            rememberAskedStart(remote.startKey);
            remote.runId = createRemoteRun(*study, copy, remote.place, remote.startKey);
        }))
        return refused;
    const StartAnswer answer = startUntilAnswered(
        *study, remote, request.force, [](const std::string &text) { std::cerr << "optlog run: " << text << "\n"; },
        g_stopFollowing);
    if (answer.kind == StartAnswer::Kind::Refused) {
        forgetUnansweredRemoteRun(*study, remote.runId); // nothing was started: nothing is kept
        forgetAskedStart(remote.startKey);
        if (answer.said.exitCode == 127 || answer.said.exitCode == 126) {
            if (const int refused = refuseBadInput("run", [&] { refuseHostAnswer(host, answer.said, "start the run"); }))
                return refused;
        }
        // The engine's own refusal (its pre-flight, a config it will not train), as it said it there.
        std::cerr << answer.said.err;
        std::cerr << "optlog run: on " << host.name << ": refused, nothing was started\n";
        return answer.said.exitCode == kExitBadInput ? kExitBadInput : kExitFailed;
    }
    if (answer.kind == StartAnswer::Kind::Lost) {
        std::cerr << "optlog run: no answer from " << host.name << " to the start of run " << remote.runId << " ("
                  << copy.name << "): " << sshSaid(answer.said) << "; it may train there: `"
                  << pasteableCommand({"optlog", "follow", request.study}) << "` asks again, and follows it\n";
        return kExitFailed;
    }
    remote.place = answer.place;
    std::cerr << "optlog run: run " << remote.runId << " (" << copy.name << ") trains on " << host.name << " as run "
              << remote.place.runId << " of " << remote.place.study << "\n"
              << "optlog run: following it into " << request.study << " (Ctrl-C stops following, the run goes on; `"
              << pasteableCommand({"optlog", "follow", request.study}) << "` follows it again, `"
              << pasteableCommand({"optlog", "cancel", request.study, std::to_string(remote.runId)}) << "` stops it)\n";
    return followRuns(request.study, {remote}, request.jsonLines);
}

bool trainsElsewhere(const std::string &path, const std::string &name)
{
    try {
        const Store study(path, Store::Access::ReadOnly);
        return remotePlace(study, study.requireRunNamed(name).id).has_value();
    } catch (const InputError &) {
        return false; // `optlog run --resume` refuses it, saying why
    }
}

int resumeOnHost(const RunRequest &request, const std::string &studyPath, const std::string &name)
{
    stopFollowingOnSignals();
    std::unique_ptr<Store> study;
    RemoteRun remote;
    std::string label;
    if (const int refused = refuseBadInput("run", [&] {
            if (!request.preset.empty() || !request.configFile.empty() || !request.overrides.empty()
                || !request.from.empty() || request.repeats != 1 || request.force || !request.rendezvous.empty())
                throw ConfigError("--resume continues a run with its own config, where it trained; leave out "
                                  "--preset, --config, --set, --from, --repeats, --force and --rendezvous");
            study = openExistingStudy(studyPath);
            requireStoredPlaces(*study);
            const RunRecord copy = study->requireRunNamed(name);
            label = "run " + std::to_string(copy.id) + " (" + printable(copy.name) + ")";
            for (const RemoteRun &run : remoteRuns(*study))
                if (run.runId == copy.id)
                    remote = run;
            const std::string follow = pasteableCommand({"optlog", "follow", studyPath});
            if (!remote.answered() && copy.isFinished())
                throw StoreError("--resume: " + label + " never trained on " + remote.place.host + " (" + copy.message
                                 + "): run it again");
            if (!remote.answered())
                throw StoreError("--resume: " + label + " has had no answer to its start from " + remote.place.host
                                 + ": `" + follow + "` asks again, and follows it");
            if (!copy.isFinished())
                throw StoreError("--resume: " + label + " still trains on " + remote.place.host
                                 + " as far as this study knows: `" + follow + "` follows it to its end");
        }))
        return refused;
    const StartAnswer answer = resumeUntilAnswered(
        remote, label, [](const std::string &text) { std::cerr << "optlog run: " << text << "\n"; }, g_stopFollowing);
    if (answer.kind == StartAnswer::Kind::Refused) {
        // The host's own refusal (a completed run, no checkpoint, a run still training), as it said it.
        std::cerr << answer.said.err;
        std::cerr << "optlog run: on " << remote.place.host << ": " << label << " was not resumed\n";
        return answer.said.exitCode == kExitBadInput ? kExitBadInput : kExitFailed;
    }
    if (answer.kind == StartAnswer::Kind::Lost) {
        std::cerr << "optlog run: no answer from " << remote.place.host << " to the resume of " << label << " ("
                  << sshSaid(answer.said) << "); it may train there again: `"
                  << pasteableCommand({"optlog", "run", "--resume", studyPath, std::to_string(remote.runId)})
                  << "` asks again: it follows the run resumed there, and resumes it only if it stopped again\n";
        return kExitFailed;
    }
    reopenRemoteRun(*study, remote.runId, answer.step, answer.run.pid, answer.run.host, answer.place.log);
    remote.place = answer.place;
    std::cerr << "optlog run: " << label << " resumed on " << remote.place.host << " after step " << answer.step
              << " of its checkpoint; following it into " << studyPath << "\n";
    return followRuns(studyPath, {remote}, request.jsonLines);
}

int followRuns(const std::string &studyPath, const std::vector<RemoteRun> &runs, bool jsonLines)
{
    stopFollowingOnSignals();
    std::mutex output;
    std::vector<int> codes(runs.size(), kExitOk);
    std::vector<std::thread> followers;
    for (size_t i = 0; i < runs.size(); ++i)
        followers.emplace_back([&, i] {
            RemoteRun run = runs[i];
            const std::string label = followerLine("run " + std::to_string(run.runId) + ": ");
            FollowOptions options;
            options.stop = &g_stopFollowing;
            options.status = [&](const std::string &text) {
                std::lock_guard lock(output);
                std::cerr << label << text << "\n";
            };
            bool announced = false;
            if (jsonLines)
                options.stored = [&](const EngineEvent &event) {
                    // One started event, as an engine's own stream has: a reader (the workbench's
                    // Monitor) takes another for another run. Later ones open a reconnection, or
                    // carry the start message the copy stores.
                    if (event.kind() == EventKind::Started && std::exchange(announced, true))
                        return;
                    EngineEvent here = event;
                    here.run = run.runId;
                    std::lock_guard lock(output);
                    std::cout << toJsonLine(here) << std::endl;
                };
            FollowResult result;
            try {
                Store store(studyPath); // a connection of its own per thread
                if (!run.answered()) {  // its start's answer was lost: asked again, by its key
                    const StartAnswer answer = startUntilAnswered(store, run, false, options.status, g_stopFollowing);
                    if (answer.kind != StartAnswer::Kind::Started) {
                        std::lock_guard lock(output);
                        codes[i] = endUnstarted(store, run, answer, label);
                        return;
                    }
                    run.place = answer.place;
                }
                result = followRemoteRun(store, run, options);
            } catch (const InputError &e) { // the study stopped taking rows, or the host could not be asked
                std::lock_guard lock(output);
                std::cerr << label << e.what() << "\n";
                codes[i] = dynamic_cast<const StoreError *>(&e) ? kExitFailed : kExitBadInput;
                return;
            } catch (const std::exception &e) { // no temporary folder, a full disk: said, not a crash
                std::lock_guard lock(output);
                std::cerr << label << e.what() << "\n";
                codes[i] = kExitFailed;
                return;
            }
            std::lock_guard lock(output);
            codes[i] = reportFollowEnd(result, label, run.place.host, studyPath);
        });
    for (std::thread &follower : followers)
        follower.join();
    for (const int code : codes)
        if (code != kExitOk)
            return code;
    return kExitOk;
}

void requireStoredPlaces(const Store &store)
{
    for (const RemoteRun &run : remoteRuns(store))
        try {
            requireDestination(run.place.host);
            requireHostProgram(run.place.optlog);
            if (run.place.study.empty() || run.place.study.front() != '/')
                throw InputError("its study there, \"" + printable(run.place.study)
                                 + "\", is not an absolute path, as every host names its studies");
            if (!run.answered() && !store.requireRun(run.runId).isFinished() && !askedHere(run.startKey))
                throw InputError("its start on " + run.place.host + " was asked from another machine (its key, "
                                 + printable(run.startKey) + ", is not one this machine asked with), and never "
                                 + "answered: it is asked again only from there");
        } catch (const InputError &e) {
            throw InputError("study '" + store.path() + "', run " + std::to_string(run.runId) + ": " + e.what()
                             + "; nothing was run (a study can come from someone else: what it names is checked "
                             + "before it reaches ssh)");
        }
}

std::vector<RemoteRun> unfinishedRemoteRuns(const Store &store, const std::vector<std::string> &names)
{
    std::vector<RemoteRun> out;
    for (const RemoteRun &remote : remoteRuns(store)) {
        const RunRecord run = store.requireRun(remote.runId);
        const bool asked = names.empty() || std::any_of(names.begin(), names.end(), [&](const std::string &name) {
                               return name == run.name || name == std::to_string(run.id);
                           });
        if (asked && !run.isFinished())
            out.push_back(remote);
    }
    return out;
}

RemoteGathering gatherRemoteRuns(Store &store)
{
    requireStoredPlaces(store);
    RemoteGathering out;
    for (const RemoteRun &remote : remoteRuns(store)) {
        if (!remote.gatheredAt.empty())
            continue;
        if (!remote.answered()) { // its start's answer was lost: `optlog follow` asks again, unless refused
            out.running += store.requireRun(remote.runId).isFinished() ? 0 : 1;
            continue;
        }
        const HostEntry host{remote.place.host, remote.place.optlog};
        const SshClient client(host.name);
        const ProgramOutput fetched = client.run(hostCommand(host.optlog,
                                                             fetchRequest(remote.place.study, remote.place.runId)),
                                                 std::chrono::seconds(600));
        if (fetched.exitCode == kExitStillRunning) {
            ++out.running;
            continue;
        }
        const PrivateFolder received("optlog-gathered");
        const std::string copyFile = received.file("run.sqlite");
        try {
            if (fetched.exitCode != 0)
                refuseHostAnswer(host, fetched,
                                 "send run " + std::to_string(remote.place.runId) + " of " + remote.place.study);
            std::ofstream(copyFile, std::ios::binary) << fetched.out;
            const Store source(copyFile, Store::Access::ReadOnly);
            const std::vector<RunRecord> runs = source.runs();
            if (runs.size() != 1)
                throw StoreError(host.name + " sent a study with " + std::to_string(runs.size())
                                 + " runs for one run: is its optlog this one?");
            out.gathered.push_back(gatherRemoteRun(store, source, runs.front().id, remote.runId));
        } catch (const InputError &e) {
            out.refused.push_back("run " + std::to_string(remote.runId) + ": " + e.what());
        }
    }
    return out;
}

int cancelRemoteRuns(const Store &store, const std::vector<std::string> &names, std::vector<std::string> &refused)
{
    requireStoredPlaces(store);
    int cancelled = 0;
    for (const RemoteRun &remote : unfinishedRemoteRuns(store, names)) {
        if (!remote.answered()) {
            refused.push_back("run " + std::to_string(remote.runId) + ": " + remote.place.host
                              + " has not answered its start yet: `"
                              + pasteableCommand({"optlog", "follow", store.path()})
                              + "` asks again and follows it, and it can be cancelled then");
            continue;
        }
        const SshClient client(remote.place.host);
        const ProgramOutput result = client.run(hostCommand(remote.place.optlog,
                                                            cancelRequest(remote.place.study, remote.place.runId)),
                                                std::chrono::seconds(60));
        if (result.exitCode == 0) {
            ++cancelled;
            std::cerr << "optlog cancel: run " << remote.runId << " on " << remote.place.host << ": "
                      << sshSaid({0, "", result.out}) << "\n";
        } else {
            try {
                refuseHostAnswer({remote.place.host, remote.place.optlog}, result, "cancel the run");
            } catch (const InputError &e) {
                refused.push_back("run " + std::to_string(remote.runId) + ": " + e.what());
            }
        }
    }
    return cancelled;
}

Command addFollowCommand(CLI::App &app, const Invocation &)
{
    auto study = std::make_shared<std::string>();
    auto runs = std::make_shared<std::vector<std::string>>();
    auto jsonLines = std::make_shared<bool>(false);
    CLI::App *command = app.add_subcommand("follow", "follow the study's runs on other machines (`optlog run --host`) "
                                                     "into it until they end, reconnecting when the connection drops");
    command->add_option("study", *study, "the study file the runs were started from")->required();
    command->add_option("runs", *runs, "only these runs (names or ids); default every run still unfinished");
    command->add_flag("--jsonl", *jsonLines, "print each event stored, as `optlog run --jsonl` does");
    return {command, [study, runs, jsonLines] {
                std::vector<RemoteRun> unfinished;
                if (const int refused = refuseBadInput("follow", [&] {
                        const std::unique_ptr<Store> store = openExistingStudy(*study);
                        requireStoredPlaces(*store);
                        unfinished = unfinishedRemoteRuns(*store, *runs);
                    }))
                    return refused;
                if (unfinished.empty()) {
                    std::cerr << followerLine("no run of " + *study + " is still training on another machine") << "\n";
                    return int(kExitOk);
                }
                return followRuns(*study, unfinished, *jsonLines);
            }};
}

} // namespace optlog
