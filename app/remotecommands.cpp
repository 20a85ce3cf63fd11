// SPDX-License-Identifier: MIT
// Runs on another machine reached over SSH, from this side (docs/remote.md): `optlog host check`,
// `optlog run --host`, `optlog follow`, and the remote runs of `optlog gather` and `optlog cancel`.
// What runs on the host is in app/hostcommands.cpp.
#include "app/commands.h"
#include "app/remote.h"
#include "core/config/configerror.h"
#include "core/contract/engineevents.h"
#include "core/contract/format.h"
#include "core/contract/inputerror.h"
#include "core/contract/program.h"
#include "core/remote/followedrun.h"
#include "core/remote/hostlist.h"
#include "core/remote/hostplaces.h"
#include "core/remote/sshclient.h"
#include "core/store/store.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
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

// ssh's last words, on one line.
std::string sshSaid(const ProgramOutput &result)
{
    std::string said = result.err;
    while (!said.empty() && (said.back() == '\n' || said.back() == '\r'))
        said.pop_back();
    return printable(said);
}

// An InputError saying why `result` of a command on `host` went wrong: unreachable, no optlog, or
// what the optlog there refused.
[[noreturn]] void refuseHostAnswer(const HostEntry &host, const ProgramOutput &result, const std::string &doing)
{
    if (result.exitCode == -1 || result.exitCode == 255)
        throw InputError("cannot reach " + host.name + " over SSH (" + sshSaid(result) + "); `ssh " + host.name
                         + " true` must work without a prompt: a key in your agent, "
                         + "the host in ~/.ssh/known_hosts");
    if (result.exitCode == 127 && onPath("ssh").empty())
        throw InputError("cannot reach " + host.name
                         + ": ssh is not installed on this machine (install OpenSSH's "
                           "client: apt install openssh-client)");
    if (result.exitCode == 127 || result.exitCode == 126)
        throw InputError(host.name + " has no optlog at `" + host.optlog + "` (" + sshSaid(result)
                         + "): install optlog there, or name its path with `optlog host check " + host.name
                         + " --optlog PATH`");
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

} // namespace

HostDescription describeHost(const HostEntry &host)
{
    const SshClient client(host.name);
    const ProgramOutput result = client.run(shellCommand({host.optlog, "host", "describe"}), std::chrono::seconds(60));
    if (result.exitCode != 0) {
        // An optlog too old to have `host describe` says it does not know the word.
        if (result.exitCode == kExitBadInput && result.err.find("unknown command") != std::string::npos)
            throw InputError(host.name + "'s optlog (`" + host.optlog + "`) predates running runs for other "
                             + "machines (no `optlog host`): update it there");
        refuseHostAnswer(host, result, "describe itself");
    }
    const nlohmann::json json = nlohmann::json::parse(result.out, nullptr, false);
    if (!json.is_object() || !json.contains("event_format") || !json["event_format"].is_number_integer())
        throw InputError(host.name + "'s `" + host.optlog + " host describe` did not answer with a description ("
                         + printable(result.out.substr(0, 80)) + "): is it optlog?");
    HostDescription out;
    out.json = json;
    out.eventFormat = json["event_format"].get<int64_t>();
    out.hostedFolder = json.value("hosted", std::string());
    if (out.eventFormat != kEventFormat)
        throw InputError(host.name + "'s optlog writes event format " + std::to_string(out.eventFormat)
                         + ", and this optlog reads format " + std::to_string(kEventFormat)
                         + " (docs/events.md): install the same optlog on both machines");
    if (out.hostedFolder.empty() || out.hostedFolder.front() != '/')
        throw InputError(host.name + "'s optlog named no folder for its studies: is it optlog?");
    return out;
}

int hostCheckCommand(const std::string &name, const std::string &optlog)
{
    HostEntry host;
    HostDescription description;
    const auto start = std::chrono::steady_clock::now();
    if (const int refused = refuseBadInput("host check", [&] {
            host = hostEntry(name);
            if (!optlog.empty())
                host.optlog = optlog;
            description = describeHost(host);
        }))
        return refused;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rememberHost(host);
    const nlohmann::json &d = description.json;
    char took[32];
    std::snprintf(took, sizeof took, "%.1f s", seconds);
    std::cout << host.name << ": reachable (`ssh " << host.name << "`, " << took << "), its machine "
              << d.value("machine", "?") << "\n";
    std::cout << "  " << d.value("optlog", "?") << "; event format " << description.eventFormat << ", study schema "
              << d.value("schema", 0) << "\n";
    std::cout << "  CPU: " << d.value("cpu", "?") << ", " << d.value("logical_cpus", 0) << " logical CPUs\n";
    const nlohmann::json gpus = d.value("gpus", nlohmann::json::array());
    if (gpus.empty())
        std::cout << "  GPU: none " << (d.value("cuda_built", false) ? "visible (CUDA build)" : "(a CPU build)")
                  << "\n";
    const std::string cuda = d.value("cuda", std::string());
    for (size_t i = 0; i < gpus.size(); ++i)
        std::cout << "  GPU " << i << ": " << gpus[i].get<std::string>() << (cuda.empty() ? "" : ", CUDA " + cuda)
                  << "\n";
    std::string tuned;
    const nlohmann::json families = d.value("tuned", nlohmann::json::object());
    for (const auto &[family, yes] : families.items())
        tuned += (tuned.empty() ? "" : ", ") + family + (yes == true ? " yes" : " no");
    std::cout << "  tuned: " << tuned << " (`optlog tune` there measures the rest)\n";
    std::cout << "  studies in " << description.hostedFolder << ": " << formatBytes(d.value("free_bytes", int64_t(0)))
              << " free\n";
    return kExitOk;
}

// `optlog run --host`: the config resolved here, its files and itself sent, the engine started
// detached there (its pre-flight's refusal is this command's), the run's copy made here, followed.
int runOnHost(const RunRequest &request, const std::string &name)
{
    stopFollowingOnSignals();
    HostEntry host;
    HostDescription description;
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
            files = filesToSend(config, description.hostedFolder);
        }))
        return refused;
    const SshClient client(host.name);
    for (const SentFile &file : files)
        if (const std::string failed = sendFile(client, file, description.hostedFolder); !failed.empty()) {
            std::cerr << "optlog run: " << failed << "; nothing was started\n";
            return kExitBadInput;
        }
    // The config travels as the start command's input: what the host trains is what was resolved here.
    const std::string configFile = std::filesystem::temp_directory_path().string() + "/optlog-host-config-"
                                   + std::to_string(getpid()) + ".toml";
    std::ofstream(configFile) << toToml(config);
    const std::string hostedStudy = description.hostedFolder + "/" + hostedStudyName(request.study);
    std::vector<std::string> start
        = {host.optlog, "host", "start", "--db", hostedStudy, "--study-seed", std::to_string(study->studySeed())};
    if (request.force)
        start.push_back("--force");
    const ProgramOutput started = client.run(shellCommand(start), std::chrono::seconds(1800), configFile);
    std::filesystem::remove(configFile);
    if (started.exitCode != 0) {
        if (started.exitCode == 255 || started.exitCode == -1 || started.exitCode == 127) {
            if (const int refused = refuseBadInput("run", [&] { refuseHostAnswer(host, started, "start the run"); }))
                return refused;
        }
        // The engine's own refusal (its pre-flight, a config it will not train), as it said it there.
        std::cerr << started.err;
        std::cerr << "optlog run: on " << host.name << ": refused, nothing was started\n";
        return started.exitCode == kExitBadInput ? kExitBadInput : kExitFailed;
    }
    const nlohmann::json answer = nlohmann::json::parse(started.out, nullptr, false);
    RemoteRun remote;
    RunRecord copy;
    try {
        remote.place = {host.name, host.optlog, hostedStudy, answer.at("run").get<int64_t>(),
                        answer.at("log").get<std::string>()};
        copy.name = answer.at("name").get<std::string>();
        copy.group = answer.at("group").get<std::string>();
        copy.configToml = answer.at("config_toml").get<std::string>();
        copy.host = answer.at("machine").get<std::string>();
        copy.pid = answer.at("pid").get<int64_t>();
        copy.createdAt = answer.at("created_at").get<std::string>();
        copy.environmentJson = answer.value("environment", std::string());
        remote.runId = study->createRemoteRun(copy, remote.place);
    } catch (const nlohmann::json::exception &) {
        std::cerr << "optlog run: " << host.name << " started something and answered \""
                  << printable(started.out.substr(0, 120)) << "\", not a run: is its optlog this one?\n";
        return kExitFailed;
    } catch (const StoreError &e) {
        std::cerr << "optlog run: " << e.what() << "; the run trains on " << host.name << " as run "
                  << remote.place.runId << " of " << hostedStudy << "\n";
        return kExitFailed;
    }
    std::cerr << "optlog run: run " << remote.runId << " (" << copy.name << ") trains on " << host.name << " as run "
              << remote.place.runId << " of " << hostedStudy << "\n"
              << "optlog run: following it into " << request.study << " (Ctrl-C stops following, the run goes on; "
              << "`optlog follow " << request.study << "` follows it again, `optlog cancel " << request.study << " "
              << remote.runId << "` stops it)\n";
    return followRuns(request.study, {remote}, request.jsonLines);
}

int followRuns(const std::string &studyPath, const std::vector<RemoteRun> &runs, bool jsonLines)
{
    stopFollowingOnSignals();
    std::mutex output;
    std::vector<int> codes(runs.size(), kExitOk);
    std::vector<std::thread> followers;
    for (size_t i = 0; i < runs.size(); ++i)
        followers.emplace_back([&, i] {
            const RemoteRun &run = runs[i];
            const std::string label = "optlog follow: run " + std::to_string(run.runId) + ": ";
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
                result = followRemoteRun(store, run, options);
            } catch (const StoreError &e) {
                std::lock_guard lock(output);
                std::cerr << label << e.what() << "\n";
                codes[i] = kExitFailed;
                return;
            }
            std::lock_guard lock(output);
            switch (result.end) {
            case FollowResult::End::Finished:
                std::cerr << label << outcomeName(result.outcome)
                          << (result.message.empty() ? "" : ": " + result.message) << " (on " << run.place.host
                          << ", up to step " << result.lastStep << ") -> " << studyPath << "\n";
                codes[i] = exitCodeFor(result.outcome);
                break;
            case FollowResult::End::Stopped:
                std::cerr << label << "stopped following at step " << result.lastStep << "; it goes on on "
                          << run.place.host << " (`optlog follow " << studyPath << "` follows it again)\n";
                codes[i] = kExitOk;
                break;
            case FollowResult::End::Refused:
                std::cerr << label << result.message << "\n";
                codes[i] = kExitBadInput;
                break;
            case FollowResult::End::Elsewhere:
                std::cerr << label << "another optlog follows it already (the workbench, or `optlog follow`)\n";
                codes[i] = kExitOk;
                break;
            case FollowResult::End::GaveUp:
                std::cerr << label << result.message << "; `optlog follow " << studyPath << "` tries again\n";
                codes[i] = kExitFailed;
                break;
            }
        });
    for (std::thread &follower : followers)
        follower.join();
    for (const int code : codes)
        if (code != kExitOk)
            return code;
    return kExitOk;
}

std::vector<RemoteRun> unfinishedRemoteRuns(const Store &store, const std::vector<std::string> &names)
{
    std::vector<RemoteRun> out;
    for (const RemoteRun &remote : store.remoteRuns()) {
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
    RemoteGathering out;
    for (const RemoteRun &remote : store.remoteRuns()) {
        if (!remote.gatheredAt.empty())
            continue;
        const HostEntry host{remote.place.host, remote.place.optlog};
        const SshClient client(host.name);
        const ProgramOutput fetched = client.run(shellCommand({host.optlog, "host", "fetch", "--db", remote.place.study,
                                                               "--run", std::to_string(remote.place.runId)}),
                                                 std::chrono::seconds(600));
        if (fetched.exitCode == kExitStillRunning) {
            ++out.running;
            continue;
        }
        const std::string copyFile = std::filesystem::temp_directory_path().string() + "/optlog-gathered-"
                                     + std::to_string(getpid()) + ".sqlite";
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
            out.gathered.push_back(store.gatherRemoteRun(source, runs.front().id, remote.runId));
        } catch (const InputError &e) {
            out.refused.push_back("run " + std::to_string(remote.runId) + ": " + e.what());
        }
        for (const char *side : {"", "-wal", "-shm"})
            std::filesystem::remove(copyFile + side);
    }
    return out;
}

int cancelRemoteRuns(const Store &store, const std::vector<std::string> &names, std::vector<std::string> &refused)
{
    int cancelled = 0;
    for (const RemoteRun &remote : unfinishedRemoteRuns(store, names)) {
        const SshClient client(remote.place.host);
        const ProgramOutput result = client.run(shellCommand({remote.place.optlog, "host", "cancel", "--db",
                                                              remote.place.study, "--run",
                                                              std::to_string(remote.place.runId)}),
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
                        unfinished = unfinishedRemoteRuns(*store, *runs);
                    }))
                    return refused;
                if (unfinished.empty()) {
                    std::cerr << "optlog follow: no run of " << *study << " is still training on another machine\n";
                    return int(kExitOk);
                }
                return followRuns(*study, unfinished, *jsonLines);
            }};
}

} // namespace optlog
