// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/studyplan.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <sys/types.h>

namespace optlog {

// This executable's path (/proc/self/exe), else `argv0`: what the engine runs as its children.
std::string selfPath(const char *argv0);

// Runs `self` with `arguments` as a child process, with `variables` set over this process's
// environment, and waits: one engine process per run gives each run its own clean peak RSS and
// keeps a crash of one run out of the others. `quiet` sends the child's output to /dev/null.
// Returns its exit code; kExitFailed when it could not start or a signal ended it.
int runChild(const std::string &self, const std::vector<std::string> &arguments,
             const std::vector<std::pair<std::string, std::string>> &variables = {}, bool quiet = false);

// The other ranks of a data-parallel run on this machine: `optlog run --rendezvous
// 127.0.0.1:PORT --rank R --world-size N` children of rank 0, started with its environment (the
// tuned variables included), their stdout on /dev/null (rank 0 alone prints the run's events) and
// killed by the kernel should rank 0 die.
class LocalRanks
{
public:
    LocalRanks() = default;
    LocalRanks(const LocalRanks &) = delete;
    LocalRanks &operator=(const LocalRanks &) = delete;
    ~LocalRanks(); // kills and reaps any rank still running

    // `cuda`: rank R is shown GPU R (CUDA_VISIBLE_DEVICES), unless the variable is already set.
    void start(const std::string &self, uint16_t port, int64_t worldSize, bool cuda);
    // A rank that has ended, and how ("rank 1 (pid 4242) was killed by signal 9"), looking for up to
    // `grace` (a collective may notice a death before the kernel reports it); empty when none has.
    std::string lost(std::chrono::milliseconds grace = std::chrono::milliseconds(2000));
    // Waits up to `timeout` for every rank to exit, then kills the rest.
    void finish(std::chrono::seconds timeout);

private:
    struct Child
    {
        int64_t rank = 0;
        pid_t pid = 0;
        bool reaped = false;
        int status = 0;
    };
    bool reap(Child &child, bool block);
    std::vector<Child> m_children;
};

} // namespace optlog
