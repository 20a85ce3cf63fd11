// SPDX-License-Identifier: MIT
#include "core/cluster/slurm.h"

#include "core/contract/format.h"
#include "core/contract/program.h"
#include "core/contract/rowlookup.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace optlog {

namespace {

std::string firstLine(const std::string &text)
{
    std::string line = text.substr(0, text.find('\n'));
    return line.empty() ? "(no message)" : line;
}

std::string trimmed(std::string text)
{
    text.erase(0, text.find_first_not_of(" \t\r\n"));
    text.erase(text.find_last_not_of(" \t\r\n") + 1);
    return text;
}

} // namespace

TaskState taskStateOf(const std::string &slurmState)
{
    // Slurm's job states (squeue and sacct spell them alike), by what they mean for a task.
    static constexpr Named<TaskState> slurmStates[]
        = {{TaskState::Queued, "PENDING"},      {TaskState::Queued, "CONFIGURING"},
           {TaskState::Queued, "REQUEUED"},     {TaskState::Queued, "REQUEUE_HOLD"},
           {TaskState::Queued, "REQUEUE_FED"},  {TaskState::Queued, "RESV_DEL_HOLD"},
           {TaskState::Running, "RUNNING"},     {TaskState::Running, "COMPLETING"},
           {TaskState::Running, "SUSPENDED"},   {TaskState::Running, "STOPPED"},
           {TaskState::Running, "SIGNALING"},   {TaskState::Running, "STAGE_OUT"},
           {TaskState::Running, "RESIZING"},    {TaskState::Done, "COMPLETED"},
           {TaskState::Cancelled, "CANCELLED"}, {TaskState::Cancelled, "REVOKED"},
           {TaskState::Failed, "FAILED"},       {TaskState::Failed, "TIMEOUT"},
           {TaskState::Failed, "NODE_FAIL"},    {TaskState::Failed, "OUT_OF_MEMORY"},
           {TaskState::Failed, "BOOT_FAIL"},    {TaskState::Failed, "DEADLINE"},
           {TaskState::Failed, "PREEMPTED"},    {TaskState::Failed, "SPECIAL_EXIT"}};
    const std::string state = slurmState.substr(0, slurmState.find(' ')); // "CANCELLED by 0"
    return valueNamed(slurmStates, state).value_or(TaskState::Unknown);
}

const char *taskStateName(TaskState state)
{
    static constexpr Named<TaskState> names[] = {{TaskState::Queued, "queued"},       {TaskState::Running, "running"},
                                                 {TaskState::Done, "done"},           {TaskState::Failed, "failed"},
                                                 {TaskState::Cancelled, "cancelled"}, {TaskState::Unknown, "unknown"}};
    return nameIn(names, state);
}

Slurm::Slurm()
    : m_sbatch(onPath("sbatch"))
    , m_squeue(onPath("squeue"))
    , m_sacct(onPath("sacct"))
    , m_scontrol(onPath("scontrol"))
    , m_scancel(onPath("scancel"))
{
    if (m_sbatch.empty() || m_squeue.empty() || m_scontrol.empty() || m_scancel.empty())
        throw SchedulerError("--scheduler slurm: Slurm's commands (sbatch, squeue, scontrol, scancel) are not on "
                             "this machine's PATH; run it on a Slurm login node, or without --scheduler to train "
                             "here");
    const ProgramOutput reach = runProgram({m_squeue, "-h", "--me", "-o", "%i"});
    if (reach.exitCode != 0)
        throw SchedulerError("--scheduler slurm: squeue cannot reach a Slurm controller: " + firstLine(reach.err)
                             + " (is SLURM_CONF or /etc/slurm/slurm.conf right, and slurmctld up?)");
}

std::string slurmPatternLiteral(const std::string &path)
{
    if (path.find_first_of("\n\\") != std::string::npos)
        throw SchedulerError("the path \"" + printable(path) + "\" holds a "
                             + (path.find('\n') != std::string::npos ? "newline" : "backslash")
                             + ", which Slurm cannot take in a log file's name: rename or move the study so that "
                               "its path holds neither");
    std::string literal;
    for (const char c : path)
        literal += c == '%' ? std::string("%%") : std::string(1, c);
    return literal;
}

std::string Slurm::submitHeld(const std::string &script, int64_t tasks, const SubmitOptions &options) const
{
    std::vector<std::string> argv = {m_sbatch, "--parsable", "--hold"};
    std::string array = "--array=0-" + std::to_string(tasks - 1);
    if (options.maxParallel > 0)
        array += "%" + std::to_string(options.maxParallel);
    argv.push_back(array);
    if (!options.partition.empty())
        argv.push_back("--partition=" + options.partition);
    if (!options.timeLimit.empty())
        argv.push_back("--time=" + options.timeLimit);
    if (!options.workingDirectory.empty())
        argv.push_back("--chdir=" + options.workingDirectory);
    if (!options.output.empty())
        argv.push_back("--output=" + options.output);
    argv.insert(argv.end(), options.extra.begin(), options.extra.end());
    argv.push_back(script);
    const ProgramOutput submitted = runProgram(argv);
    const std::string jobId = trimmed(submitted.out.substr(0, submitted.out.find(';'))); // "4242;cluster"
    if (submitted.exitCode != 0 || jobId.empty()
        || !std::all_of(jobId.begin(), jobId.end(), [](char c) { return c >= '0' && c <= '9'; }))
        throw SchedulerError("sbatch refused the job: "
                             + firstLine(submitted.err.empty() ? submitted.out : submitted.err));
    return jobId;
}

void Slurm::release(const std::string &jobId) const
{
    const ProgramOutput released = runProgram({m_scontrol, "release", jobId});
    if (released.exitCode != 0)
        throw SchedulerError("scontrol release " + jobId + " failed: " + firstLine(released.err)
                             + "; release it by hand, or cancel it with scancel " + jobId);
}

std::map<int64_t, std::string> Slurm::taskStates(const std::string &jobId, int64_t tasks) const
{
    const auto isNumber = [](const std::string &text) {
        return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    std::map<int64_t, std::string> states;
    std::string rest; // the job's own record: the state of the tasks it does not list one by one
    const ProgramOutput queue = runProgram({m_squeue, "-h", "-r", "--states=all", "-j", jobId, "-o", "%K %T"});
    if (queue.exitCode == 0) {
        std::istringstream lines(queue.out);
        std::string task, state;
        while (lines >> task >> state) {
            if (isNumber(task))
                states[std::stoll(task)] = state;
            else
                rest = state; // "N/A": the array's record
        }
    }
    if (states.empty() && rest.empty() && !m_sacct.empty()) {
        // The controller has forgotten the job (past MinJobAge): accounting remembers, where it is on.
        const ProgramOutput accounted = runProgram({m_sacct, "-n", "-P", "-X", "-j", jobId, "-o", "JobID,State"});
        std::istringstream lines(accounted.exitCode == 0 ? accounted.out : std::string());
        std::string line;
        while (std::getline(lines, line)) {
            const size_t underscore = line.find('_'), bar = line.find('|');
            if (underscore == std::string::npos || bar == std::string::npos || bar < underscore)
                continue;
            const std::string task = line.substr(underscore + 1, bar - underscore - 1);
            if (isNumber(task))
                states[std::stoll(task)] = trimmed(line.substr(bar + 1));
            else
                rest = trimmed(line.substr(bar + 1)); // "[2-3]": the tasks that never started
        }
    }
    if (!rest.empty())
        for (int64_t task = 0; task < tasks; ++task)
            states.emplace(task, rest);
    return states;
}

void Slurm::cancel(const std::string &jobId, int64_t task) const
{
    const std::string target = task < 0 ? jobId : jobId + "_" + std::to_string(task);
    const ProgramOutput cancelled = runProgram({m_scancel, target});
    if (cancelled.exitCode != 0)
        throw SchedulerError("scancel " + target + " failed: " + firstLine(cancelled.err));
}

} // namespace optlog
