// SPDX-License-Identifier: MIT
// `optlog host`: a machine that trains runs started from another one over SSH (docs/remote.md).
// `check` runs on this side; the rest is what the other side asks the host's optlog for: a
// description of its machine, a run started detached, a run's rows as they come, a cancel, and an
// ended run whole.
#include "app/commands.h"
#include "app/enginework.h"
#include "app/remote.h"
#include "core/config/configerror.h"
#include "core/config/tuning.h"
#include "core/contract/engineevents.h"
#include "core/remote/hostplaces.h"
#include "core/remote/runstream.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <spawn.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace optlog {

std::string thisMachine()
{
    char name[256] = {};
    return ::gethostname(name, sizeof name - 1) == 0 ? std::string(name) : std::string();
}

namespace {

// A config is a few KiB; more on the start command's input is not one.
constexpr size_t kMaxConfigBytes = 1 << 20;
// How long a run may take to start (its data loaded, a first tuning probe) before it has a row.
constexpr auto kStartTimeout = std::chrono::minutes(30);

// The engine started in a session of its own (no terminal, no SIGHUP when the connection that
// started it closes), its output in `log`.
pid_t startDetached(const std::vector<std::string> &arguments, const std::string &log)
{
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    sigset_t none, defaults;
    sigemptyset(&none);
    sigfillset(&defaults);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setsigdefault(&attributes, &defaults);
    std::vector<char *> argv;
    for (const std::string &argument : arguments)
        argv.push_back(const_cast<char *>(argument.c_str()));
    argv.push_back(nullptr);
    pid_t pid = -1;
    const int failed = posix_spawn(&pid, argv[0], &actions, &attributes, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    if (failed != 0)
        throw std::runtime_error("cannot start the engine: " + std::string(std::strerror(failed)));
    return pid;
}

std::optional<RunRecord> runOfProcess(const Store &store, pid_t pid)
{
    const std::string here = thisMachine();
    for (const RunRecord &run : store.runs())
        if (run.pid == pid && run.host == here)
            return run;
    return std::nullopt;
}

std::string fileText(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

// Reads the run's config on stdin, starts `optlog run` on it detached into `study`, and waits until
// the run exists there (then prints where it is, as JSON) or the engine has ended without one (its
// refusal, printed as it said it, and its exit code).
int hostStartCommand(const std::string &studyPath, int64_t studySeed, bool force, const std::string &self)
{
    std::string config;
    std::unique_ptr<Store> study;
    if (const int refused = refuseBadInput("host start", [&] {
            config.assign(std::istreambuf_iterator<char>(std::cin), {});
            if (config.empty() || config.size() > kMaxConfigBytes)
                throw ConfigError("the run's config comes on the standard input, as TOML (at most 1 MiB); got "
                                  + std::to_string(config.size()) + " bytes");
            study = std::make_unique<Store>(studyPath);
            if (study->studySeed() != studySeed) {
                if (!study->runs().empty())
                    throw StoreError("study '" + studyPath + "' validates on the windows of seed "
                                     + std::to_string(study->studySeed()) + ", not " + std::to_string(studySeed)
                                     + ": it belongs to another study elsewhere");
                study->setStudySeed(studySeed);
            }
        }))
        return refused;
    const std::string folder = studyPath + ".logs";
    std::filesystem::create_directories(folder);
    std::string stamp = utcNow();
    std::replace(stamp.begin(), stamp.end(), ':', '-');
    const std::string base = folder + "/" + stamp + "-" + std::to_string(getpid());
    std::ofstream(base + ".toml") << config;
    std::vector<std::string> arguments = {self, "run", "--db", studyPath, "--config", base + ".toml"};
    if (force)
        arguments.push_back("--force");
    const pid_t engine = startDetached(arguments, base + ".log");
    const auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
    for (;;) {
        int status = 0;
        const bool ended = ::waitpid(engine, &status, WNOHANG) == engine;
        if (const std::optional<RunRecord> run = runOfProcess(*study, engine)) {
            const nlohmann::json answer = {{"run", run->id},
                                           {"pid", engine},
                                           {"log", base + ".log"},
                                           {"name", run->name},
                                           {"group", run->group},
                                           {"config_toml", run->configToml},
                                           {"machine", run->host},
                                           {"created_at", run->createdAt},
                                           {"environment", run->environmentJson}};
            std::cout << answer.dump() << std::endl;
            return kExitOk;
        }
        if (ended) {
            std::cerr << fileText(base + ".log");
            return WIFEXITED(status) ? WEXITSTATUS(status) : kExitFailed;
        }
        if (std::chrono::steady_clock::now() > deadline) {
            ::kill(engine, SIGTERM);
            std::cerr << "optlog host start: the engine made no run within 30 min; stopped (its output: " << base
                      << ".log)\n";
            return kExitFailed;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
}

int hostStreamCommand(const std::string &studyPath, int64_t runId, const CopyEnd &from)
{
    std::signal(SIGPIPE, SIG_IGN); // a dropped connection is a failed write, not a signal
    try {
        const std::unique_ptr<Store> study = openExistingStudy(studyPath); // marks a dead engine's run crashed
        study->requireRun(runId);
        return streamRun(*study, runId, from, STDOUT_FILENO, std::chrono::milliseconds(100)) ? kExitOk : kExitFailed;
    } catch (const InputError &e) {
        std::cerr << "optlog host stream: " << e.what() << "\n";
        return kExitBadInput;
    }
}

int hostCancelCommand(const std::string &studyPath, int64_t runId)
{
    RunRecord run;
    if (const int refused = refuseBadInput("host cancel",
                                           [&] { run = openExistingStudy(studyPath)->requireRun(runId); }))
        return refused;
    if (run.isFinished()) {
        std::cout << "already ended " << outcomeName(run.outcome) << "\n";
        return kExitOk;
    }
    // Only the engine that trains it: this optlog, by its pid on this machine.
    std::error_code error;
    const bool engine = run.host == thisMachine()
                        && std::filesystem::equivalent("/proc/" + std::to_string(run.pid) + "/exe", "/proc/self/exe",
                                                       error);
    if (!engine || ::kill(pid_t(run.pid), SIGTERM) != 0) {
        std::cerr << "optlog host cancel: run " << runId << "'s engine (process " << run.pid << " on " << run.host
                  << ") is not running here\n";
        return kExitBadInput;
    }
    std::cout << "asked its engine (process " << run.pid << " on " << run.host
              << ") to stop: it ends cancelled after its step, its checkpoint kept for --resume\n";
    return kExitOk;
}

int hostFetchCommand(const std::string &studyPath, int64_t runId)
{
    std::unique_ptr<Store> study;
    RunRecord run;
    if (const int refused = refuseBadInput("host fetch", [&] {
            study = openExistingStudy(studyPath);
            run = study->requireRun(runId);
        }))
        return refused;
    if (!run.isFinished()) {
        std::cerr << "optlog host fetch: run " << runId << " is still running\n";
        return kExitStillRunning;
    }
    const std::string copy = studyPath + ".fetch-" + std::to_string(getpid()) + ".sqlite";
    const int refused = refuseBadInput("host fetch", [&] { Store::copyRunsInto(*study, {runId}, copy); });
    if (refused == 0)
        std::cout << fileText(copy) << std::flush;
    for (const char *side : {"", "-wal", "-shm"})
        std::filesystem::remove(copy + side);
    return refused;
}

} // namespace

Command addHostCommand(CLI::App &app, const Invocation &invocation)
{
    struct Options
    {
        std::string name, optlog, study;
        int64_t run = 0, studySeed = Store::kDefaultStudySeed;
        bool force = false;
        CopyEnd from;
        HostSetupRequest setup;
    };
    auto o = std::make_shared<Options>();
    CLI::App *command = app.add_subcommand("host", "another machine that trains runs started from here over SSH "
                                                   "(docs/remote.md)");
    command->require_subcommand(1);
    CLI::App *check = command->add_subcommand("check", "whether a host can train runs for this machine: reachable, "
                                                       "its optlog, devices, tuning and free disk; remembered");
    check->add_option("name", o->name, "the SSH destination: an alias from ~/.ssh/config, user@host")->required();
    check->add_option("--optlog", o->optlog, "the optlog command there (default: optlog, on its PATH)");
    CLI::App *setup = command->add_subcommand("setup", "install optlog on a host into the Python environment that "
                                                       "holds its torch, over SSH, then check and remember it");
    setup->add_option("name", o->setup.name, "the SSH destination: an alias from ~/.ssh/config, user@host")->required();
    setup
        ->add_option("--python", o->setup.python,
                     "the interpreter there whose torch optlog's engine links, "
                     "e.g. ~/venv/bin/python")
        ->required();
    setup->add_option("--wheel", o->setup.wheel,
                      "send this wheel (packaging/setup.sh wheel), installed where it was "
                      "built for the host's torch");
    setup->add_option("--sdist", o->setup.sdist, "build this sdist there (default: the one the optlog package carries)");
    // What the other side asks a host's optlog for: not for people, and so left out of --help.
    CLI::App *describe = command->add_subcommand("describe", "")->group("");
    CLI::App *start = command->add_subcommand("start", "")->group("");
    CLI::App *stream = command->add_subcommand("stream", "")->group("");
    CLI::App *cancel = command->add_subcommand("cancel", "")->group("");
    CLI::App *fetch = command->add_subcommand("fetch", "")->group("");
    for (CLI::App *sub : {start, stream, cancel, fetch})
        sub->add_option("--db", o->study)->required();
    for (CLI::App *sub : {stream, cancel, fetch})
        sub->add_option("--run", o->run)->required();
    start->add_option("--study-seed", o->studySeed);
    start->add_flag("--force", o->force);
    stream->add_option("--metrics-from", o->from.metrics);
    stream->add_option("--validation-from", o->from.validation);
    stream->add_option("--events-from", o->from.events);
    return {command, [=] {
                if (check->parsed())
                    return hostCheckCommand(o->name, o->optlog);
                if (setup->parsed())
                    return hostSetupCommand(o->setup, invocation.self);
                if (describe->parsed())
                    return hostDescribeCommand();
                if (start->parsed())
                    return hostStartCommand(o->study, o->studySeed, o->force, invocation.self);
                if (stream->parsed())
                    return hostStreamCommand(o->study, o->run, o->from);
                if (cancel->parsed())
                    return hostCancelCommand(o->study, o->run);
                return hostFetchCommand(o->study, o->run);
            }};
}

} // namespace optlog
