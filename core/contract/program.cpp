// SPDX-License-Identifier: MIT
#include "core/contract/program.h"

#include "core/contract/outcome.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace optlog {

namespace {

// One change to a starting program's file descriptors: `fd` opened on `path`, or, where `path` is
// null, made a copy of `from`.
struct DescriptorChange
{
    int fd;
    const char *path;
    int flags;
    mode_t mode;
    int from;
};

// The changes `start` asks for, in order; `outPipe` and `errPipe` are the pipes' write ends.
std::vector<DescriptorChange> descriptorChanges(const ProgramStart &start, int outPipe, int errPipe)
{
    std::vector<DescriptorChange> changes;
    if (!start.inputFile.empty())
        changes.push_back({STDIN_FILENO, start.inputFile.c_str(), O_RDONLY, 0, -1});
    switch (start.output) {
    case ProgramOutputs::Inherited: break;
    case ProgramOutputs::Pipes:
        changes.push_back({STDOUT_FILENO, nullptr, 0, 0, outPipe});
        changes.push_back({STDERR_FILENO, nullptr, 0, 0, errPipe});
        break;
    case ProgramOutputs::Discarded:
        changes.push_back({STDOUT_FILENO, "/dev/null", O_WRONLY, 0, -1});
        changes.push_back({STDERR_FILENO, "/dev/null", O_WRONLY, 0, -1});
        break;
    case ProgramOutputs::OutputDiscarded: changes.push_back({STDOUT_FILENO, "/dev/null", O_WRONLY, 0, -1}); break;
    case ProgramOutputs::AppendedToFile:
        changes.push_back({STDOUT_FILENO, start.outputFile.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644, -1});
        changes.push_back({STDERR_FILENO, nullptr, 0, 0, STDOUT_FILENO});
        break;
    }
    return changes;
}

// This process's environment with `variables` set over it, each replacing one of the same name.
std::vector<std::string> environmentWith(const std::vector<std::pair<std::string, std::string>> &variables)
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
    return environment;
}

// The null-terminated array exec takes, pointing into `words`, which must outlive it.
std::vector<char *> execArray(const std::vector<std::string> &words)
{
    std::vector<char *> array;
    for (const std::string &word : words)
        array.push_back(const_cast<char *>(word.c_str()));
    array.push_back(nullptr);
    return array;
}

// Starts with posix_spawn: its pid, else -1 with errno set.
pid_t spawnProgram(const ProgramStart &start, const std::vector<DescriptorChange> &changes, char *const argv[],
                   char *const envp[])
{
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    for (const DescriptorChange &change : changes)
        if (change.path)
            posix_spawn_file_actions_addopen(&actions, change.fd, change.path, change.flags, change.mode);
        else
            posix_spawn_file_actions_adddup2(&actions, change.from, change.fd);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    switch (start.group) {
    case ProcessGroup::Ours: break;
    case ProcessGroup::Own:
        posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
        posix_spawnattr_setpgroup(&attributes, 0);
        break;
    case ProcessGroup::OwnSession:
        posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
        posix_spawnattr_setsigmask(&attributes, &none);
        posix_spawnattr_setsigdefault(&attributes, &all);
        break;
    }
    pid_t pid = -1;
    const int failed = start.lookUpOnPath ? posix_spawnp(&pid, argv[0], &actions, &attributes, argv, envp)
                                          : posix_spawn(&pid, argv[0], &actions, &attributes, argv, envp);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    errno = failed;
    return failed == 0 ? pid : -1;
}

// The child's side of forkProgram, from fork to exec: only async-signal-safe calls, on what the
// parent prepared before it forked (a fork of a process with threads may hold any lock).
[[noreturn]] void becomeProgram(const ProgramStart &start, pid_t parent, const std::vector<DescriptorChange> &changes,
                                const char *path, char *const argv[], char *const envp[])
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(kExitFailed); // the parent ended before the signal was asked for
    for (const DescriptorChange &change : changes) {
        const int fd = change.path ? open(change.path, change.flags, change.mode) : change.from;
        if (fd < 0 || (fd != change.fd && dup2(fd, change.fd) < 0))
            _exit(kExitFailed);
        if (fd == change.fd)
            fcntl(fd, F_SETFD, 0); // kept open across exec, as posix_spawn keeps it
        else if (change.path)
            close(fd);
    }
    if (start.group == ProcessGroup::Own)
        setpgid(0, 0);
    if (start.group == ProcessGroup::OwnSession) {
        setsid();
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        struct sigaction defaults = {};
        defaults.sa_handler = SIG_DFL;
        for (int number = 1; number < NSIG; ++number)
            sigaction(number, &defaults, nullptr); // refused for SIGKILL and SIGSTOP, which is as well
    }
    execve(path, argv, envp);
    _exit(kExitFailed);
}

// Starts with fork and exec, for what posix_spawn cannot do: its pid, else -1 with errno set.
pid_t forkProgram(const ProgramStart &start, const std::vector<DescriptorChange> &changes, char *const argv[],
                  char *const envp[])
{
    // execvp is not async-signal-safe: the path is looked up before the fork.
    const bool lookUp = start.lookUpOnPath && !std::strchr(argv[0], '/');
    const std::string path = lookUp ? onPath(argv[0]) : argv[0];
    if (path.empty()) {
        errno = ENOENT;
        return -1;
    }
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid == 0)
        becomeProgram(start, parent, changes, path.c_str(), argv, envp);
    return pid;
}

} // namespace

StartedProgram startProgram(const ProgramStart &start)
{
    StartedProgram started;
    if (start.argv.empty()) {
        started.error = "no program to start";
        return started;
    }
    int outPipe[2] = {-1, -1}, errPipe[2] = {-1, -1};
    if (start.output == ProgramOutputs::Pipes && (pipe2(outPipe, O_CLOEXEC) != 0 || pipe2(errPipe, O_CLOEXEC) != 0)) {
        started.error = std::strerror(errno);
        for (const int fd : {outPipe[0], outPipe[1]})
            if (fd >= 0)
                close(fd);
        return started;
    }
    // Without variables of its own it gets this process's environment as it is.
    const std::vector<std::string> environment = start.variables.empty() ? std::vector<std::string>()
                                                                         : environmentWith(start.variables);
    const std::vector<char *> argv = execArray(start.argv), envp = execArray(environment);
    char *const *programEnvironment = start.variables.empty() ? environ : envp.data();
    const std::vector<DescriptorChange> changes = descriptorChanges(start, outPipe[1], errPipe[1]);
    std::fflush(nullptr); // what we printed before it comes before what it prints
    started.pid = start.diesWithParent ? forkProgram(start, changes, argv.data(), programEnvironment)
                                       : spawnProgram(start, changes, argv.data(), programEnvironment);
    if (started.pid < 0)
        started.error = std::strerror(errno);
    for (const int fd : {outPipe[1], errPipe[1]})
        if (fd >= 0)
            close(fd);
    if (start.output == ProgramOutputs::Pipes && started.pid >= 0) {
        started.out = outPipe[0];
        started.err = errPipe[0];
    } else if (start.output == ProgramOutputs::Pipes) {
        close(outPipe[0]);
        close(errPipe[0]);
    }
    return started;
}

StartedProgram startProgram(const std::vector<std::string> &argv, const std::string &inputFile)
{
    ProgramStart start;
    start.argv = argv;
    start.lookUpOnPath = true;
    start.inputFile = inputFile.empty() ? "/dev/null" : inputFile;
    start.output = ProgramOutputs::Pipes;
    start.group = ProcessGroup::Own;
    return startProgram(start);
}

std::optional<int> reapProgram(pid_t pid, bool block)
{
    int status = 0;
    pid_t done = 0;
    while ((done = waitpid(pid, &status, block ? 0 : WNOHANG)) < 0 && errno == EINTR) {
    }
    if (done != pid)
        return std::nullopt;
    return status;
}

int waitForProgram(pid_t pid)
{
    const int status = reapProgram(pid).value_or(0);
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
