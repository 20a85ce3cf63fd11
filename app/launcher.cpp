// SPDX-License-Identifier: MIT
#include "app/launcher.h"

#include "core/contract/outcome.h"

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
