// SPDX-License-Identifier: MIT
#include "app/launcher.h"

#include "core/engine/environment.h"
#include "core/config/tuning.h"
#include "core/contract/outcome.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace optlog {

namespace {

// Set in the re-executed process: the names optlog set, so the run's environment can say so,
// and a guard against relaunching twice.
constexpr const char *kMarker = "OPTLOG_SET_VARIABLES";

} // namespace

void relaunchWithRuntimeVariables(char **argv, const std::string &precisionMode)
{
    if (std::getenv(kMarker))
        return;
    const std::string family = precisionFamily(precisionMode);
    const auto tuned = readTuning(tuningCacheFile(), machineKey(), family);
    std::vector<std::pair<std::string, std::string>> choices = {
        {"OMP_WAIT_POLICY", tuned ? tuned->waitPolicy : kUntunedWaitPolicy}};
    if (tuned && !tuned->coreType.empty())
        choices.push_back({"OPENBLAS_CORETYPE", tuned->coreType});
    if (tuned) {
        setenv("OPTLOG_TUNED_THREADS", std::to_string(tuned->threads).c_str(), 1);
        setenv("OPTLOG_TUNING", ("tuned for " + family + " by optlog tune (" + tuningCacheFile() + ")").c_str(), 1);
    } else {
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
    std::fprintf(stderr, "optlog: could not re-execute with %s set (%s); running with the defaults\n",
                 setNames.c_str(), std::strerror(errno));
}

std::string selfPath(const char *argv0)
{
    char self[4096] = {};
    const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    return n > 0 ? std::string(self, size_t(n)) : std::string(argv0);
}

std::vector<std::string> runArguments(const PlannedRun &run, const std::string &study)
{
    std::vector<std::string> arguments = {"run", "--db", study};
    if (!run.from.empty())
        arguments.insert(arguments.end(), {"--from", run.from});
    else if (!run.preset.empty())
        arguments.insert(arguments.end(), {"--preset", run.preset});
    if (!run.configFile.empty())
        arguments.insert(arguments.end(), {"--config", run.configFile});
    for (const auto &o : run.overrides)
        arguments.insert(arguments.end(), {"--set", o});
    arguments.insert(arguments.end(), {"--set", fieldAssignment(*findConfigField("name"), run.name)});
    return arguments;
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

} // namespace optlog
