// SPDX-License-Identifier: MIT
#include "core/contract/program.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace optlog {

StartedProgram startProgram(const std::vector<std::string> &argv, const std::string &inputFile)
{
    StartedProgram started;
    int outPipe[2], errPipe[2];
    if (pipe2(outPipe, O_CLOEXEC) != 0)
        return started;
    if (pipe2(errPipe, O_CLOEXEC) != 0) {
        close(outPipe[0]);
        close(outPipe[1]);
        return started;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, outPipe[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, errPipe[1], STDERR_FILENO);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, inputFile.empty() ? "/dev/null" : inputFile.c_str(),
                                     O_RDONLY, 0);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);
    std::vector<char *> args;
    for (const std::string &a : argv)
        args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = 0;
    const int spawned = posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    close(outPipe[1]);
    close(errPipe[1]);
    if (spawned != 0) {
        close(outPipe[0]);
        close(errPipe[0]);
        return started;
    }
    return {pid, outPipe[0], errPipe[0]};
}

int waitForProgram(pid_t pid)
{
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

ProgramOutput runProgram(const std::vector<std::string> &argv, std::chrono::milliseconds timeout,
                         const std::string &inputFile)
{
    ProgramOutput result;
    const StartedProgram started = startProgram(argv, inputFile);
    if (started.pid < 0)
        return result;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    bool late = false;
    pollfd fds[2] = {{started.out, POLLIN, 0}, {started.err, POLLIN, 0}};
    std::string *sinks[2] = {&result.out, &result.err};
    int open = 2;
    while (open > 0) {
        int wait = -1;
        if (timeout.count() > 0) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline
                                                                                    - std::chrono::steady_clock::now());
            if (left.count() <= 0) {
                late = true;
                break;
            }
            wait = int(left.count());
        }
        if (poll(fds, 2, wait) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            char buffer[65536];
            const ssize_t n = read(fds[i].fd, buffer, sizeof(buffer));
            if (n > 0) {
                sinks[i]->append(buffer, size_t(n));
            } else if (n == 0 || errno != EINTR) {
                fds[i].fd = -1;
                --open;
            }
        }
    }
    if (late)
        kill(started.pid, SIGKILL);
    result.exitCode = waitForProgram(started.pid);
    if (late) {
        result.exitCode = -1;
        result.err += "no answer within " + std::to_string(timeout.count() / 1000) + " s";
    }
    close(started.out);
    close(started.err);
    return result;
}

std::string shellQuoted(const std::string &value)
{
    std::string quoted = "'";
    for (const char c : value)
        quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "'";
}

std::string shellCommand(const std::vector<std::string> &words)
{
    std::string line;
    for (const std::string &word : words)
        line += (line.empty() ? "" : " ") + shellQuoted(word);
    return line;
}

std::string pasteableCommand(const std::vector<std::string> &words)
{
    std::string line;
    for (const std::string &word : words) {
        const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](unsigned char c) {
            return std::isalnum(c) || (c != 0 && std::strchr("-_./:,+=@%", c) != nullptr);
        });
        line += (line.empty() ? "" : " ") + (plain ? word : shellQuoted(word));
    }
    return line;
}

std::string installedEngine(const std::string &optlog)
{
    const std::filesystem::path folder = std::filesystem::path(optlog).parent_path();
    for (const std::filesystem::path &engine :
         {folder / "optlog-engine", folder / ".." / "libexec" / "optlog" / "optlog-engine"})
        if (::access(engine.c_str(), X_OK) == 0)
            return engine.lexically_normal().string();
    return "";
}

std::string onPath(const std::string &program)
{
    const char *path = std::getenv("PATH");
    std::stringstream folders(path ? path : "/usr/bin:/bin");
    std::string folder;
    while (std::getline(folders, folder, ':')) {
        const std::string candidate = (folder.empty() ? "." : folder) + "/" + program;
        if (::access(candidate.c_str(), X_OK) == 0)
            return candidate;
    }
    return "";
}

} // namespace optlog
