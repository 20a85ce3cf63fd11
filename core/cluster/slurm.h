// SPDX-License-Identifier: MIT
#pragma once

#include "core/contract/inputerror.h"
#include "core/contract/program.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace optlog {

// Slurm refused or is missing: what it said, and what would be right. Nothing was submitted.
class SchedulerError : public InputError
{
public:
    using InputError::InputError;
};

// How a task of a job stands, in optlog's words: Slurm's many states (PENDING, CONFIGURING,
// COMPLETING, NODE_FAIL, ...) fall into these.
enum class TaskState { Queued, Running, Done, Failed, Cancelled, Unknown };
TaskState taskStateOf(const std::string &slurmState);
const char *taskStateName(TaskState state); // "queued", "running", "done", "failed", "cancelled", "unknown"
inline bool hasEnded(TaskState state)
{
    return state == TaskState::Done || state == TaskState::Failed || state == TaskState::Cancelled;
}

struct SubmitOptions
{
    std::string partition;          // empty: the cluster's default
    int64_t maxParallel = 0;        // tasks running at once; 0: as many as Slurm allows
    std::string timeLimit;          // HH:MM:SS per task; empty: the partition's
    std::vector<std::string> extra; // passed to sbatch as they are (--sbatch-arg)
    std::string workingDirectory;   // where each task starts
    std::string output;             // each task's log: a filename pattern of sbatch's (%A the job, %a the task)
};

// `path` as a literal in a filename pattern of sbatch's (--output): each % doubled. Throws
// SchedulerError for a path no pattern can hold as it is: a newline (sbatch reads options line by
// line), or a backslash (which turns every pattern off).
std::string slurmPatternLiteral(const std::string &path);

// The Slurm client on this machine: its commands (sbatch, squeue, sacct, scontrol, scancel) run as
// programs, as a user would run them, with SLURM_CONF and the rest of the environment as given.
class Slurm
{
public:
    // Throws SchedulerError when sbatch or squeue is not on the PATH, or squeue cannot reach a
    // controller: "--scheduler slurm: ...".
    Slurm();

    // Submits `script` as an array of `tasks` tasks (0 to tasks - 1), held until release(): the
    // job's id. Throws SchedulerError with sbatch's own message when it refuses.
    std::string submitHeld(const std::string &script, int64_t tasks, const SubmitOptions &options) const;
    void release(const std::string &jobId) const;
    // The Slurm state (RUNNING, COMPLETED, ...) of each of the job's `tasks` tasks, from squeue while
    // the controller remembers the job, else from sacct where accounting is on; a task neither knows
    // is absent. Tasks that never started share the job's own record (a cancelled array's rest).
    std::map<int64_t, std::string> taskStates(const std::string &jobId, int64_t tasks) const;
    // scancel: the whole job, or one task of it. Throws SchedulerError with scancel's message.
    void cancel(const std::string &jobId, int64_t task = -1) const;

private:
    std::string m_sbatch, m_squeue, m_sacct, m_scontrol, m_scancel;
};

} // namespace optlog
