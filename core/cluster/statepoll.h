// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace optlog {

class Slurm;

// The tasks' Slurm states for a window that asks about once a second (the workbench): each job is
// asked about at most once per `interval`, and a machine without a reachable Slurm is tried again
// only after `retry`, since each try runs squeue. Where Slurm cannot be asked, no state is known,
// so callers keep the state last stored. Safe to call from several threads.
class TaskStatePoll
{
public:
    explicit TaskStatePoll(std::chrono::milliseconds interval = std::chrono::seconds(3),
                           std::chrono::milliseconds retry = std::chrono::seconds(30));
    ~TaskStatePoll();

    std::map<int64_t, std::string> statesOf(const std::string &jobId, int64_t tasks);
    // The states of the next call are asked of Slurm, not remembered (after a cancel, say).
    void forget();

private:
    using Clock = std::chrono::steady_clock;
    struct Answer
    {
        Clock::time_point at;
        std::map<int64_t, std::string> states;
    };

    const std::chrono::milliseconds m_interval, m_retry;
    std::mutex m_mutex;
    std::unique_ptr<Slurm> m_slurm;
    Clock::time_point m_triedAt;
    bool m_tried = false;
    std::map<std::string, Answer> m_answers; // by job id
};

} // namespace optlog
