// SPDX-License-Identifier: MIT
#include "app/launcher.h"

#include "core/contract/outcome.h"
#include "core/contract/program.h"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

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
    ProgramStart start;
    start.argv = {self};
    start.argv.insert(start.argv.end(), arguments.begin(), arguments.end());
    start.variables = variables;
    start.output = quiet ? ProgramOutputs::Discarded : ProgramOutputs::Inherited;
    const StartedProgram child = startProgram(start);
    if (child.pid < 0)
        return kExitFailed;
    const int status = reapProgram(child.pid).value_or(0);
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
    // On CUDA each rank takes a GPU of its own (the first visible one is the one a run uses):
    // rank R sees GPU R, unless the user chose with CUDA_VISIBLE_DEVICES.
    const bool pickGpu = cuda && !std::getenv("CUDA_VISIBLE_DEVICES");
    for (int64_t rank = 1; rank < worldSize; ++rank) {
        ProgramStart start;
        start.argv = {self,           "run",
                      "--rendezvous", "127.0.0.1:" + std::to_string(port),
                      "--rank",       std::to_string(rank),
                      "--world-size", std::to_string(worldSize)};
        if (pickGpu)
            start.variables = {{"CUDA_VISIBLE_DEVICES", std::to_string(rank)}};
        start.output = ProgramOutputs::OutputDiscarded;
        start.diesWithParent = true;
        const StartedProgram child = startProgram(start);
        if (child.pid < 0)
            throw std::runtime_error("could not start rank " + std::to_string(rank) + ": " + child.error);
        m_children.push_back({rank, child.pid});
    }
}

bool LocalRanks::reap(Child &child, bool block)
{
    if (child.reaped)
        return true;
    const std::optional<int> status = reapProgram(child.pid, block);
    if (!status)
        return false;
    child.reaped = true;
    child.status = *status;
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
