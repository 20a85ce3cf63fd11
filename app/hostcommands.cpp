// SPDX-License-Identifier: MIT
// `optlog host`: a machine that trains runs started from another one over SSH (docs/remote.md).
// `check` runs on this side; the rest is what the other side asks the host's optlog for: a
// description of its machine, a run started detached, a run's rows as they come, a cancel, an
// ended run whole, and a stopped run resumed.
#include "app/commands.h"
#include "app/enginework.h"
#include "app/remote.h"
#include "core/config/configerror.h"
#include "core/config/tuning.h"
#include "core/contract/engineevents.h"
#include "core/contract/format.h"
#include "core/contract/inputerror.h"
#include "core/contract/program.h"
#include "core/contract/thismachine.h"
#include "core/remote/hostplaces.h"
#include "core/remote/hostprotocol.h"
#include "core/remote/runstream.h"
#include "core/store/curation.h"
#include "core/store/weights.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <optional>
#include <random>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

namespace optlog {

std::string newStartKey()
{
    std::random_device source; // the kernel's random bytes (getrandom, /dev/urandom)
    std::string key;
    char digits[9];
    for (int i = 0; i < 4; ++i) {
        std::snprintf(digits, sizeof digits, "%08x", unsigned(source()));
        key += digits;
    }
    return key;
}

void requireStartKey(const std::string &key)
{
    if (key.size() != 32 || key.find_first_not_of("0123456789abcdef") != std::string::npos)
        throw InputError("--key \"" + printable(key) + "\" is not a start's key: 32 hexadecimal digits, in lower case");
}

namespace {

// A config is a few KiB; more on the start command's input is not one.
constexpr size_t kMaxConfigBytes = 1 << 20;

// The engine started in a session of its own (no terminal, no SIGHUP when the connection that
// started it closes), its output in `log`.
pid_t startDetached(const std::vector<std::string> &arguments, const std::string &log)
{
    ProgramStart start;
    start.argv = arguments;
    start.inputFile = "/dev/null";
    start.output = ProgramOutputs::AppendedToFile;
    start.outputFile = log;
    start.group = ProcessGroup::OwnSession;
    const StartedProgram engine = startProgram(start);
    if (engine.pid < 0)
        throw std::runtime_error("cannot start the engine: " + engine.error);
    return engine.pid;
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

// What `host start` answers for the run the engine `pid` made in `study`, its output in `log`.
nlohmann::json startAnswer(const RunRecord &run, pid_t pid, const std::string &log)
{
    const StartReply reply{run.id,         pid,      log,           run.name,           run.group,
                           run.configToml, run.host, run.createdAt, run.environmentJson};
    return nlohmann::json::parse(toJsonText(reply));
}

// A start's record by its key, <study>.starts/<key>.json: the engine's pid and log once it is
// started, the whole answer once its run exists. A start asked again with the key (its answer was
// lost with the connection) answers from it, or waits on that engine, and never starts another.
// One start of a key at a time: a lock on <key>.lock beside it, which the kernel lets go of when
// the process that holds it ends.
class StartRecord
{
public:
    StartRecord(const std::string &studyPath, const std::string &key)
        : m_path(studyPath + ".starts/" + key + ".json")
    {
        std::filesystem::create_directories(studyPath + ".starts");
        const std::string lock = studyPath + ".starts/" + key + ".lock";
        m_lock = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (m_lock < 0 || ::flock(m_lock, LOCK_EX) != 0) // waits while another start of this key runs
            throw std::runtime_error("cannot lock " + lock + ": " + std::strerror(errno));
    }
    ~StartRecord()
    {
        if (m_lock >= 0)
            ::close(m_lock);
    }
    StartRecord(const StartRecord &) = delete;
    StartRecord &operator=(const StartRecord &) = delete;

    nlohmann::json read() const
    {
        const nlohmann::json json = nlohmann::json::parse(fileText(m_path), nullptr, false);
        return json.is_object() ? json : nlohmann::json::object();
    }
    // Replaced whole (written aside, then renamed), so that a reader never sees half of it.
    void write(const nlohmann::json &json) const
    {
        std::ofstream(m_path + ".part") << json.dump();
        std::filesystem::rename(m_path + ".part", m_path);
    }
    void forget() const { std::filesystem::remove(m_path); }

private:
    std::string m_path;
    int m_lock = -1;
};

// Where an engine started for another machine writes its output: <study>.logs/<time>-<pid>.log.
std::string newLogFile(const std::string &studyPath)
{
    const std::string folder = studyPath + ".logs";
    std::filesystem::create_directories(folder);
    std::string stamp = utcNow();
    std::replace(stamp.begin(), stamp.end(), ':', '-');
    return folder + "/" + stamp + "-" + std::to_string(getpid()) + ".log";
}

// Waits until `answered` has an answer for the engine `pid` (prints it, and keeps it in `record`)
// or the engine has ended without one (prints its output and forgets the record: it was refused,
// and asked again it would be refused again). `child`: this process started it and reaps it.
int answerWhenReady(const std::function<std::optional<nlohmann::json>()> &answered, pid_t engine, bool child,
                    const std::string &log, const StartRecord &record)
{
    const auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
    for (;;) {
        const std::optional<int> status = child ? reapProgram(engine, false) : std::nullopt;
        const bool ended = child ? status.has_value() : ::kill(engine, 0) != 0;
        if (const std::optional<nlohmann::json> answer = answered()) {
            record.write(*answer);
            std::cout << answer->dump() << std::endl;
            return kExitOk;
        }
        if (ended) {
            record.forget();
            std::cerr << fileText(log);
            return status && WIFEXITED(*status) ? WEXITSTATUS(*status) : kExitFailed;
        }
        if (std::chrono::steady_clock::now() > deadline) {
            ::kill(engine, SIGTERM);
            record.forget();
            std::cerr << "optlog host: the engine did not start the run within " << minutesText(kStartTimeout)
                      << "; stopped (its output: " << log << ")\n";
            return kExitFailed;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
}

// Reads the run's config on stdin, starts `optlog run` on it detached into `study`, and waits until
// the run exists there (then prints where it is, as JSON) or the engine has ended without one (its
// refusal, printed as it said it, and its exit code). Asked again with the same key, it answers
// with the run that key started, or waits on its engine: the other side may ask as often as its
// connection drops.
int hostStartCommand(const std::string &studyPath, int64_t studySeed, bool force, const std::string &key,
                     size_t configBytes, const std::string &self)
{
    std::string config;
    std::unique_ptr<Store> study;
    if (const int refused = refuseBadInput("host start", [&] {
            requireStartKey(key);
            config.assign(std::istreambuf_iterator<char>(std::cin), {});
            if (config.empty() || config.size() > kMaxConfigBytes || config.size() != configBytes)
                throw ConfigError("the run's config comes on the standard input, as TOML of --config-bytes "
                                  + std::to_string(configBytes) + " bytes (at most 1 MiB); got "
                                  + std::to_string(config.size()) + " bytes (a connection cut while it was sent?)");
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
    // The connection that asked may drop at any moment: the answer is recorded all the same.
    std::signal(SIGHUP, SIG_IGN);
    std::signal(SIGPIPE, SIG_IGN);
    const StartRecord record(studyPath, key);
    const nlohmann::json known = record.read();
    if (known.contains("run")) {
        std::cout << known.dump() << std::endl;
        return kExitOk;
    }
    const bool startedBefore = known.contains("pid"); // by a start of this key whose process ended
    const std::string log = startedBefore ? known.value("log", std::string()) : newLogFile(studyPath);
    pid_t engine = startedBefore ? known["pid"].get<pid_t>() : -1;
    if (!startedBefore) {
        const std::string configFile = log.substr(0, log.size() - 4) + ".toml";
        std::ofstream(configFile) << config;
        std::vector<std::string> arguments = {self, "run", "--db", studyPath, "--config", configFile};
        if (force)
            arguments.push_back("--force");
        engine = startDetached(arguments, log);
        record.write({{"pid", engine}, {"log", log}});
    }
    const auto answered = [&]() -> std::optional<nlohmann::json> {
        const std::optional<RunRecord> run = runOfProcess(*study, engine);
        return run ? std::optional(startAnswer(*run, engine, log)) : std::nullopt;
    };
    return answerWhenReady(answered, engine, !startedBefore, log, record);
}

// Resumes run `runId` of `study` from its newest checkpoint (`optlog run --resume`, detached) and
// waits until the engine has reopened it: prints the engine, its log and the checkpoint's step, as
// JSON, and keeps that (<study>.starts/run-<id>-resume.json). Asked again with the same key (its
// answer was lost), or while the engine it started trains the run, it answers the same: a resume
// is done once for one asking, and a run still training is followed, never resumed beside itself.
int hostResumeCommand(const std::string &studyPath, int64_t runId, const std::string &key, const std::string &self)
{
    std::unique_ptr<Store> study;
    if (const int refused = refuseBadInput("host resume", [&] {
            requireStartKey(key);
            study = openExistingStudy(studyPath); // marks a run whose engine died as crashed
            study->requireRun(runId);
        }))
        return refused;
    std::signal(SIGHUP, SIG_IGN);
    std::signal(SIGPIPE, SIG_IGN);
    const StartRecord record(studyPath, "run-" + std::to_string(runId) + "-resume");
    const nlohmann::json known = record.read();
    const RunRecord run = study->requireRun(runId);
    const bool resumedByIt = !run.isFinished() && known.value("pid", int64_t(-1)) == run.pid;
    if (known.value("key", std::string()) == key || resumedByIt) {
        std::cout << known.dump() << std::endl;
        return kExitOk;
    }
    if (!run.isFinished()) {
        std::cerr << "optlog host resume: run " << runId << " of " << studyPath << " is still running (process "
                  << run.pid << " on " << run.host << "); it can be resumed once it has stopped\n";
        return kExitBadInput;
    }
    // None: the engine refuses, saying why, as it refuses every run it cannot resume.
    const std::optional<WeightFile> checkpoint = latestCheckpoint(*study, runId);
    const std::string log = newLogFile(studyPath);
    const pid_t engine = startDetached({self, "run", "--resume", studyPath, std::to_string(runId)}, log);
    // Reopened under this engine (it may have ended again since: its rows are the run's all the same).
    const auto answered = [&]() -> std::optional<nlohmann::json> {
        const RunRecord now = study->requireRun(runId);
        if (now.pid != engine)
            return std::nullopt;
        const ResumeReply reply{key, engine, log, checkpoint ? checkpoint->step : -1, now.host};
        return nlohmann::json::parse(toJsonText(reply));
    };
    return answerWhenReady(answered, engine, true, log, record);
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
    const int refused = refuseBadInput("host fetch", [&] { copyRunsInto(*study, {runId}, copy); });
    if (refused == 0)
        std::cout << fileText(copy) << std::flush;
    removeStudyFile(copy);
    return refused;
}

} // namespace

Command addHostCommand(CLI::App &app, const Invocation &invocation)
{
    struct Options
    {
        std::string name, optlog, study, key;
        int64_t run = 0, studySeed = Store::kDefaultStudySeed;
        size_t configBytes = 0;
        bool force = false;
        CopyEnd from;
        HostSetupRequest setup;
    };
    auto o = std::make_shared<Options>();
    CLI::App *command = app.add_subcommand(kHostCommand, "another machine that trains runs started from here over SSH "
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
    // Its words are the protocol's (core/remote/hostprotocol.h), which the asking side builds with.
    const auto verb = [&](HostVerb v) { return command->add_subcommand(hostVerbName(v), "")->group(""); };
    CLI::App *describe = verb(HostVerb::Describe), *start = verb(HostVerb::Start), *stream = verb(HostVerb::Stream);
    CLI::App *cancel = verb(HostVerb::Cancel), *fetch = verb(HostVerb::Fetch), *resume = verb(HostVerb::Resume);
    for (CLI::App *sub : {start, stream, cancel, fetch, resume})
        sub->add_option(HostOption::kStudy, o->study)->required();
    for (CLI::App *sub : {stream, cancel, fetch, resume})
        sub->add_option(HostOption::kRun, o->run)->required();
    start->add_option(HostOption::kStudySeed, o->studySeed);
    start->add_flag(HostOption::kForce, o->force);
    for (CLI::App *sub : {start, resume})
        sub->add_option(HostOption::kKey, o->key)->required();
    start->add_option(HostOption::kConfigBytes, o->configBytes)->required();
    stream->add_option(HostOption::kMetricsFrom, o->from.metrics);
    stream->add_option(HostOption::kValidationFrom, o->from.validation);
    stream->add_option(HostOption::kEventsFrom, o->from.events);
    return {command, [=] {
                if (check->parsed())
                    return hostCheckCommand(o->name, o->optlog);
                if (setup->parsed())
                    return hostSetupCommand(o->setup, invocation.self);
                if (describe->parsed())
                    return hostDescribeCommand();
                if (start->parsed())
                    return hostStartCommand(o->study, o->studySeed, o->force, o->key, o->configBytes, invocation.self);
                if (stream->parsed())
                    return hostStreamCommand(o->study, o->run, o->from);
                if (cancel->parsed())
                    return hostCancelCommand(o->study, o->run);
                if (resume->parsed())
                    return hostResumeCommand(o->study, o->run, o->key, invocation.self);
                return hostFetchCommand(o->study, o->run);
            }};
}

} // namespace optlog
