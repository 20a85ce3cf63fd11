// SPDX-License-Identifier: MIT
#include "core/cluster/statepoll.h"

#include "core/cluster/slurm.h"

namespace optlog {

TaskStatePoll::TaskStatePoll(std::chrono::milliseconds interval, std::chrono::milliseconds retry)
    : m_interval(interval)
    , m_retry(retry)
{ }

TaskStatePoll::~TaskStatePoll() = default;

std::map<int64_t, std::string> TaskStatePoll::statesOf(const std::string &jobId, int64_t tasks)
{
    const std::lock_guard lock(m_mutex);
    const Clock::time_point now = Clock::now();
    if (const auto answer = m_answers.find(jobId); answer != m_answers.end() && now - answer->second.at < m_interval)
        return answer->second.states;
    if (!m_slurm && (!m_tried || now - m_triedAt >= m_retry)) {
        m_tried = true;
        m_triedAt = now;
        try {
            m_slurm = std::make_unique<Slurm>();
        } catch (const SchedulerError &) {
            // no Slurm here (a study copied off the cluster): the states last stored stand
        }
    }
    if (!m_slurm)
        return {};
    Answer &answer = m_answers[jobId];
    answer.at = now;
    answer.states = m_slurm->taskStates(jobId, tasks);
    return answer.states;
}

void TaskStatePoll::forget()
{
    const std::lock_guard lock(m_mutex);
    m_answers.clear();
}

} // namespace optlog
