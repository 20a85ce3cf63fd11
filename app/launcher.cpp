// SPDX-License-Identifier: MIT
#include "app/launcher.h"

#include "core/config/tuning.h"
#include "core/contract/outcome.h"
#include "core/engine/machine/environment.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace optlog {

namespace {

// Set in the re-executed process: the names optlog set, so the run's environment can say so,
// and a guard against relaunching twice.
constexpr const char *kMarker = "OPTLOG_SET_VARIABLES";

// Whether an untuned machine's first run probes first: unless OPTLOG_PROBE_UNTUNED=0 (tests that
// must run untuned, and people who want optlog's fixed defaults).
bool probesUntuned()
{
    const char *setting = std::getenv("OPTLOG_PROBE_UNTUNED");
    return !setting || std::string(setting) != "0";
}

// The tuning for `family` here, made first by a quick probe where there is none. Runs started
// together (a study's, a workbench queue's) wait for one probe under a lock on the cache rather
// than each probing while the others load the machine.
std::optional<TunedSettings> tuningFor(const char *self, const std::string &precisionMode, const std::string &family)
{
    const std::string cache = tuningCacheFile(), key = machineKey();
    std::optional<TunedSettings> tuned = readTuning(cache, key, family);
    if (tuned || !probesUntuned())
        return tuned;
    const std::string lockPath = cache + ".lock";
    std::error_code ignored; // without the folder the probe still runs, unlocked
    std::filesystem::create_directories(std::filesystem::path(cache).parent_path(), ignored);
    const int lock = open(lockPath.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock >= 0)
        flock(lock, LOCK_EX);
    tuned = readTuning(cache, key, family); // another run may have probed while this one waited
    if (!tuned) {
        std::fprintf(stderr,
                     "optlog: this machine has no tuning for %s; probing threads, wait policy and product path first "
                     "(about a minute; "
                     "`optlog tune` measures longer)\n",
                     family.c_str());
        const auto start = std::chrono::steady_clock::now();
        const int status = runChild(selfPath(self), {"tune", "--quick", "--modes", precisionMode}, {}, true);
        tuned = readTuning(cache, key, family);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (tuned)
            std::fprintf(stderr, "optlog: probed in %.0f s: %d thread%s, OMP_WAIT_POLICY=%s%s%s%s%s (kept in %s)\n",
                         seconds, tuned->threads, tuned->threads == 1 ? "" : "s", tuned->waitPolicy.c_str(),
                         tuned->coreType.empty() ? "" : ", OPENBLAS_CORETYPE=", tuned->coreType.c_str(),
                         tuned->productPath.empty() ? "" : ", products on ", tuned->productPath.c_str(), cache.c_str());
        else if (status == 0) // it ran, and kept nothing: the machine was busy (tunecommand.cpp)
            std::fprintf(stderr,
                         "optlog: the machine was busy while the probe ran, so nothing was kept; this run uses the "
                         "untuned defaults, and the next probes again\n");
        else
            std::fprintf(stderr, "optlog: the probe failed (exit %d); this run uses the untuned defaults\n", status);
    }
    if (lock >= 0)
        close(lock); // and with it the lock
    return tuned;
}

} // namespace

void relaunchWithRuntimeVariables(char **argv, const std::string &precisionMode)
{
    if (std::getenv(kMarker))
        return;
    const std::string family = precisionFamily(precisionMode);
    const auto tuned = tuningFor(argv[0], precisionMode, family);
    std::vector<std::pair<std::string, std::string>> choices = {
        {"OMP_WAIT_POLICY", tuned ? tuned->waitPolicy : kUntunedWaitPolicy}};
    if (tuned && !tuned->coreType.empty())
        choices.push_back({"OPENBLAS_CORETYPE", tuned->coreType});
    if (tuned) {
        setenv("OPTLOG_TUNED_THREADS", std::to_string(tuned->threads).c_str(), 1);
        if (!tuned->productPath.empty()) // runtime.gemm = "auto" takes it (environment.h: runProductPaths)
            setenv("OPTLOG_TUNED_GEMM", tuned->productPath.c_str(), 1);
        else
            unsetenv("OPTLOG_TUNED_GEMM"); // none measured: the defaults, whatever a parent passed on
        setenv("OPTLOG_TUNING",
               ("tuned for " + family + " by " + tuned->measuredBy + " (" + tuningCacheFile() + ")").c_str(), 1);
    } else {
        unsetenv("OPTLOG_TUNED_GEMM");
        setenv("OPTLOG_TUNING", ("untuned: optlog tune has not measured " + family + " on this machine").c_str(), 1);
    }

    std::string setNames;
    for (const auto &[name, value] : choices) {
        if (std::getenv(name.c_str()))
            continue; // the user's or the system's value wins, an empty one too
        setenv(name.c_str(), value.c_str(), 0);
        setNames += (setNames.empty() ? "" : ",") + name;
    }
    setenv(kMarker, setNames.c_str(), 1);
    if (setNames.empty())
        return;
    execv("/proc/self/exe", argv);
    // If the re-exec fails the run still works, only slower; say so rather than stop.
    std::fprintf(stderr, "optlog: could not re-execute with %s set (%s); running with the defaults\n", setNames.c_str(),
                 std::strerror(errno));
}

std::string selfPath(const char *argv0)
{
    char self[4096] = {};
    const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    return n > 0 ? std::string(self, size_t(n)) : std::string(argv0);
}

int runChild(const std::string &self, const std::vector<std::string> &arguments,
             const std::vector<std::pair<std::string, std::string>> &variables, bool quiet)
{
    std::vector<std::string> environment;
    for (char **entry = environ; *entry; ++entry) {
        const std::string text = *entry;
        const std::string name = text.substr(0, text.find('='));
        const bool replaced = std::any_of(variables.begin(), variables.end(),
                                          [&name](const auto &variable) { return variable.first == name; });
        if (!replaced)
            environment.push_back(text);
    }
    for (const auto &[name, value] : variables)
        environment.push_back(name + "=" + value);

    std::vector<char *> argv = {const_cast<char *>(self.c_str())};
    for (const auto &a : arguments)
        argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    std::vector<char *> envp;
    for (auto &e : environment)
        envp.push_back(e.data());
    envp.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (quiet) {
        posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    }
    std::fflush(nullptr); // the child starts with no buffered lines of ours to print again
    pid_t pid = 0;
    const int spawned = posix_spawn(&pid, self.c_str(), &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0)
        return kExitFailed;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : kExitFailed;
}

LocalRanks::~LocalRanks()
{
    for (Child &child : m_children)
        if (!child.reaped) {
            kill(child.pid, SIGKILL);
            reap(child, true);
        }
}

void LocalRanks::start(const std::string &self, uint16_t port, int64_t worldSize, bool cuda)
{
    const pid_t parent = getpid();
    // On CUDA each rank takes a GPU of its own (the first visible one is the one a run uses):
    // rank R sees GPU R, unless the user chose with CUDA_VISIBLE_DEVICES.
    const bool pickGpu = cuda && !std::getenv("CUDA_VISIBLE_DEVICES");
    for (int64_t rank = 1; rank < worldSize; ++rank) {
        std::vector<std::string> arguments = {self,           "run",
                                              "--rendezvous", "127.0.0.1:" + std::to_string(port),
                                              "--rank",       std::to_string(rank),
                                              "--world-size", std::to_string(worldSize)};
        std::vector<char *> argv;
        for (auto &a : arguments)
            argv.push_back(a.data());
        argv.push_back(nullptr);
        std::vector<std::string> environment;
        for (char **entry = environ; *entry; ++entry)
            environment.emplace_back(*entry);
        if (pickGpu)
            environment.push_back("CUDA_VISIBLE_DEVICES=" + std::to_string(rank));
        std::vector<char *> envp;
        for (auto &e : environment)
            envp.push_back(e.data());
        envp.push_back(nullptr);
        std::fflush(nullptr);
        const pid_t pid = fork();
        if (pid < 0)
            throw std::runtime_error(std::string("could not start rank ") + std::to_string(rank) + ": "
                                     + std::strerror(errno));
        if (pid == 0) {
            // Only async-signal-safe calls between fork and exec.
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != parent)
                _exit(kExitFailed); // rank 0 is already gone
            const int null = open("/dev/null", O_WRONLY);
            if (null >= 0)
                dup2(null, STDOUT_FILENO);
            execve(self.c_str(), argv.data(), envp.data());
            _exit(kExitFailed);
        }
        m_children.push_back({rank, pid});
    }
}

bool LocalRanks::reap(Child &child, bool block)
{
    if (child.reaped)
        return true;
    int status = 0;
    pid_t done = 0;
    while ((done = waitpid(child.pid, &status, block ? 0 : WNOHANG)) < 0 && errno == EINTR) {
    }
    if (done != child.pid)
        return false;
    child.reaped = true;
    child.status = status;
    return true;
}

std::string LocalRanks::lost(std::chrono::milliseconds grace)
{
    const auto deadline = std::chrono::steady_clock::now() + grace;
    while (true) {
        for (Child &child : m_children) {
            reap(child, false);
            if (!child.reaped)
                continue;
            const std::string rank = "rank " + std::to_string(child.rank) + " (pid " + std::to_string(child.pid) + ")";
            if (WIFSIGNALED(child.status))
                return rank + " was killed by signal " + std::to_string(WTERMSIG(child.status)) + " ("
                       + strsignal(WTERMSIG(child.status)) + ")";
            if (WIFEXITED(child.status) && WEXITSTATUS(child.status) != kExitOk)
                return rank + " exited with code " + std::to_string(WEXITSTATUS(child.status));
        }
        if (std::chrono::steady_clock::now() >= deadline)
            return "";
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
}

void LocalRanks::finish(std::chrono::seconds timeout)
{
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (Child &child : m_children) {
        while (!reap(child, false) && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        if (!child.reaped) {
            kill(child.pid, SIGKILL);
            reap(child, true);
        }
    }
}

} // namespace optlog
