// SPDX-License-Identifier: MIT
// Runs on a cluster: `optlog study --scheduler slurm` submits a plan's runs as one job array,
// `optlog gather` collects the runs from the tasks' shard studies, `optlog cancel` stops tasks.
#include "app/cli.h"
#include "app/commands.h"
#include "app/enginework.h"
#include "app/launcher.h"
#include "app/remote.h"
#include "app/studycommand.h"
#include "core/analysis/planruns.h"
#include "core/cluster/gather.h"
#include "core/cluster/slurm.h"
#include "core/config/presets.h"
#include "core/config/studyplan.h"
#include "core/contract/outcome.h"
#include "core/contract/program.h"
#include "core/store/clusterjobs.h"
#include "core/store/remoteruns.h"
#include "core/store/store.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

namespace optlog {

namespace {

namespace fs = std::filesystem;

// How often `--wait` asks Slurm how the tasks stand.
constexpr auto kPollInterval = std::chrono::seconds(2);

// One task of the job to submit: the run, and the shard it trains into. A run that stopped in an
// earlier task's shard with a checkpoint goes on there (`--resume`); any other starts in a new
// shard named after the job and task, which exist only once Slurm has answered.
struct TaskPlan
{
    PlannedRun run;
    std::string resumeShard; // absolute; empty: a new shard
};

TaskStatesOf statesFrom(const Slurm *slurm)
{
    return [slurm](const std::string &jobId, int64_t tasks) {
        return slurm ? slurm->taskStates(jobId, tasks) : std::map<int64_t, std::string>{};
    };
}

// Says what a gathering did, on stderr as the study's progress; true when no shard was refused.
bool report(const char *command, const Gathering &gathering)
{
    for (const std::string &run : gathering.gathered)
        std::cerr << "optlog " << command << ": gathered " << run << "\n";
    for (const std::string &lost : gathering.lost)
        std::cerr << "optlog " << command << ": " << lost << "\n";
    for (const std::string &refused : gathering.refused)
        std::cerr << "optlog " << command << ": refused shard " << refused << "\n";
    return gathering.refused.empty();
}

// A name Slurm shows in squeue: the plan's, in plain characters.
std::string jobName(const std::string &plan)
{
    std::string name = "optlog-";
    for (const char c : plan)
        name += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ? c : '_';
    return name;
}

// The batch script of the array: task i runs `optlog run` for the i-th run into its shard. The
// new shards' names hold the job id, which the task reads from Slurm's environment. Every path and
// name in it is a literal (shellQuoted): a study's name runs nothing on the node, whatever it holds.
// The tasks' log files are sbatch's --output, an argument of its (SubmitOptions::output).
std::string batchScript(const std::vector<TaskPlan> &tasks, const std::string &planName, const std::string &shards,
                        const std::string &self)
{
    std::ostringstream script;
    script << "#!/bin/bash\n"
           << "# optlog study " << jobName(planName)
           << " on Slurm, written by `optlog study --scheduler slurm`: one run per\n"
           << "# array task, each into a shard study of its own; `optlog gather` copies them into the study.\n"
           << "#SBATCH --job-name=" << jobName(planName) << "\n"
           << "#SBATCH --open-mode=append\n"
           << "# Never started again by Slurm after a node fails: that would train the run afresh beside\n"
           << "# its crashed attempt. `optlog study` again resumes it from its checkpoint.\n"
           << "#SBATCH --no-requeue\n"
           << "set -u\n"
           << "case \"$SLURM_ARRAY_TASK_ID\" in\n";
    for (size_t i = 0; i < tasks.size(); ++i) {
        const TaskPlan &task = tasks[i];
        std::vector<std::string> arguments;
        if (!task.resumeShard.empty()) {
            arguments = {"run", "--resume", task.resumeShard, task.run.name};
        } else {
            arguments = runArguments(task.run, "@SHARD@");
        }
        script << i << ") exec " << shellQuoted(self);
        for (const std::string &argument : arguments)
            script << " "
                   << (argument == "@SHARD@" ? shellQuoted(shards + "/") + "\"${SLURM_ARRAY_JOB_ID}\""
                                                   + shellQuoted("-" + std::to_string(i) + ".sqlite")
                                             : shellQuoted(argument));
        script << " ;;\n";
    }
    script << "esac\n"
           << "echo \"optlog: this job has no task $SLURM_ARRAY_TASK_ID\" >&2\n"
           << "exit 2\n";
    return script.str();
}

std::string planText(const std::string &source, const std::vector<std::string> &overrides)
{
    std::string text;
    if (fs::exists(source)) {
        std::ifstream in(source);
        text.assign(std::istreambuf_iterator<char>(in), {});
    } else {
        text = studyText(source);
    }
    for (const std::string &override : overrides)
        text += "\n# --set " + override;
    return text;
}

// Waits for every task of the study to end, gathering each run as it does.
bool waitAndGather(Store &study, const Slurm &slurm)
{
    bool whole = true;
    while (true) {
        const Gathering gathering = gatherClusterRuns(study, statesFrom(&slurm));
        whole = report("study", gathering) && whole;
        if (gathering.waiting == 0)
            return whole;
        std::this_thread::sleep_for(kPollInterval);
    }
}

// Cancels the study's tasks still queued or running (of `runs` only, when named), saying each on
// stderr: the number cancelled. Queued tasks go first: cancelling a running one first would let a
// queued one start in its place.
int cancelTasks(const Store &study, const Slurm &slurm, const std::vector<std::string> &runs)
{
    int cancelled = 0;
    for (const bool running : {false, true}) {
        for (const ClusterJob &job : clusterJobs(study)) {
            const std::map<int64_t, std::string> states = slurm.taskStates(job.jobId, int64_t(job.tasks.size()));
            for (const ClusterTask &task : job.tasks) {
                const auto seen = states.find(task.task);
                const std::string state = seen == states.end() ? task.state : seen->second;
                const TaskState now = taskStateOf(state);
                const bool named = runs.empty() || std::find(runs.begin(), runs.end(), task.runName) != runs.end();
                if (!named || hasEnded(now) || (now == TaskState::Running) != running)
                    continue;
                slurm.cancel(job.jobId, task.task);
                std::cerr << "optlog cancel: cancelled " << task.runName << " (job " << job.jobId << " task "
                          << task.task << ", was " << state << ")\n";
                ++cancelled;
            }
        }
    }
    return cancelled;
}

// The plan's runs still to do, as tasks to submit: all but those an earlier job still has queued
// or running (said on stderr), each resuming the shard it stopped in where it can.
std::vector<TaskPlan> tasksToSubmit(const Store &study, const StudyPlan &plan)
{
    std::vector<TaskPlan> tasks;
    std::vector<std::string> queued;
    for (const ClusterJob &job : clusterJobs(study))
        for (const ClusterTask &task : job.tasks)
            if (!hasEnded(taskStateOf(task.state)))
                queued.push_back(task.runName);
    for (PlannedRun &run : planRuns(plan, study.runs()).todo) {
        if (std::find(queued.begin(), queued.end(), run.name) != queued.end()) {
            std::cerr << "optlog study: " << run.name << " is already queued or running on Slurm, kept\n";
            continue;
        }
        tasks.push_back({run, resumableShard(study, run)});
    }
    return tasks;
}

// Adds the submitted job's tasks to `job`, each with its shard relative to the study's folder;
// a task's new shard (in `shards`, named after the job and task) is created here with the study's seed.
void addTasksWithShards(ClusterJob &job, const std::vector<TaskPlan> &tasks, const Store &study,
                        const std::string &studyFile, const std::string &shards)
{
    const std::string shardsRelative = fs::path(studyFile).filename().string() + ".shards";
    for (size_t i = 0; i < tasks.size(); ++i) {
        ClusterTask task;
        task.task = int64_t(i);
        task.runName = tasks[i].run.name;
        if (tasks[i].resumeShard.empty()) {
            const std::string name = job.jobId + "-" + std::to_string(i) + ".sqlite";
            Store(shards + "/" + name).setStudySeed(study.studySeed()); // validated on the study's windows
            task.shard = shardsRelative + "/" + name;
        } else {
            task.shard = fs::relative(tasks[i].resumeShard, fs::absolute(studyFile).parent_path()).string();
        }
        job.tasks.push_back(task);
    }
}

// What to run next when `optlog study` does not wait for the tasks it submitted.
void printFollowUpCommands(const std::string &studyFile)
{
    std::cerr << "optlog study: `" << pasteableCommand({"optlog", "runs", studyFile}) << "` shows the tasks,\n"
              << "optlog study: `" << pasteableCommand({"optlog", "gather", studyFile})
              << "` collects the runs that have ended,\n"
              << "optlog study: `" << pasteableCommand({"optlog", "cancel", studyFile}) << "` stops the rest\n";
}

} // namespace

int clusterStudyCommand(const StudyRequest &request, const StudyPlan &plan, const std::string &studyFile,
                        const std::string &self)
{
    std::unique_ptr<Slurm> slurm;
    std::unique_ptr<Store> study;
    std::vector<TaskPlan> tasks;
    const std::string shards = fs::absolute(studyFile).string() + ".shards";
    std::string logs; // the tasks' log files, as sbatch's pattern
    if (const int refused = refuseBadInput("study", [&] {
            logs = slurmPatternLiteral(shards) + "/%A-%a.log"; // before anything is written
            slurm = std::make_unique<Slurm>();
            study = std::make_unique<Store>(studyFile);
            // What earlier jobs finished counts as done; what they still run is not submitted again.
            report("study", gatherClusterRuns(*study, statesFrom(slurm.get())));
            tasks = tasksToSubmit(*study, plan);
        }))
        return refused;

    if (!tasks.empty()) {
        fs::create_directories(shards);
        const std::string stamp = utcNow();
        std::string scriptPath = shards + "/submit-" + stamp + ".sh";
        std::replace(scriptPath.begin() + long(shards.size()), scriptPath.end(), ':', '-');
        const std::string script = batchScript(tasks, plan.name, shards, self);
        std::ofstream(scriptPath) << script;
        SubmitOptions options = request.submit;
        options.workingDirectory = fs::current_path().string();
        options.output = logs;
        std::string jobId;
        if (const int refused = refuseBadInput("study", [&] {
                jobId = slurm->submitHeld(scriptPath, int64_t(tasks.size()), options);
            }))
            return refused;
        // Held until the study records it: a task never starts before its shard and row exist.
        try {
            ClusterJob job{jobId, "slurm", planText(request.plan, request.overrides), script, stamp, {}};
            addTasksWithShards(job, tasks, *study, studyFile, shards);
            addClusterJob(*study, job);
            slurm->release(jobId);
        } catch (const std::exception &e) {
            try {
                slurm->cancel(jobId);
            } catch (const SchedulerError &) {
            }
            std::cerr << "optlog study: " << e.what() << "; job " << jobId << " was cancelled\n";
            return kExitFailed;
        }
        std::cerr << "optlog study: submitted " << tasks.size() << " run" << (tasks.size() == 1 ? "" : "s")
                  << " to Slurm as job " << jobId;
        if (request.submit.maxParallel > 0)
            std::cerr << ", at most " << request.submit.maxParallel << " at once";
        std::cerr << " (script " << scriptPath << ")\n";
    } else {
        std::cerr << "optlog study: nothing to submit: every run of " << plan.name << " is done or queued\n";
    }
    if (!request.wait) {
        printFollowUpCommands(studyFile);
        return kExitOk;
    }
    std::cerr << "optlog study: waiting for the tasks (Ctrl-C stops waiting; the tasks go on)\n";
    if (!waitAndGather(*study, *slurm))
        return kExitBadInput;
    return comparePlannedStudy(plan, studyFile, request.wide);
}

Command addGatherCommand(CLI::App &app, const Invocation &)
{
    auto study = std::make_shared<std::string>();
    CLI::App *command = app.add_subcommand("gather", "copy the runs that have ended on a cluster's tasks (from their "
                                                     "shards) or on other machines (over SSH) into the study, whole");
    command->add_option("study", *study, "the study file the runs were submitted from")->required();
    return {command, [study] {
                std::unique_ptr<Store> store;
                RemoteGathering remote;
                if (const int refused = refuseBadInput("gather", [&] {
                        store = openExistingStudy(*study);
                        remote = gatherRemoteRuns(*store);
                    }))
                    return refused;
                for (const std::string &why : remote.refused)
                    std::cerr << "optlog gather: " << why << "\n";
                Gathering gathering;
                const bool onCluster = !clusterJobs(*store).empty();
                if (onCluster) {
                    std::unique_ptr<Slurm> slurm;
                    try {
                        slurm = std::make_unique<Slurm>();
                    } catch (const SchedulerError &e) {
                        std::cerr << "optlog gather: " << e.what() << "; gathering with the states last seen\n";
                    }
                    if (const int refused = refuseBadInput("gather", [&] {
                            gathering = gatherClusterRuns(*store, statesFrom(slurm.get()));
                        }))
                        return refused;
                }
                const bool whole = report("gather", gathering) && remote.refused.empty();
                const size_t gathered = gathering.gathered.size() + remote.gathered.size();
                std::cerr << "optlog gather: " << gathered << " run" << (gathered == 1 ? "" : "s") << " gathered into "
                          << *study;
                if (onCluster)
                    std::cerr << ", " << gathering.waiting << " task" << (gathering.waiting == 1 ? "" : "s")
                              << " still queued or running";
                if (remote.running > 0)
                    std::cerr << ", " << remote.running << " run" << (remote.running == 1 ? "" : "s")
                              << " still training on other machines (`"
                              << pasteableCommand({"optlog", "follow", *study}) << "` follows them)";
                std::cerr << "\n";
                return int(whole ? kExitOk : kExitBadInput);
            }};
}

Command addCancelCommand(CLI::App &app, const Invocation &)
{
    auto study = std::make_shared<std::string>();
    auto runs = std::make_shared<std::vector<std::string>>();
    CLI::App *command = app.add_subcommand("cancel", "cancel a study's runs on other machines and its cluster tasks "
                                                     "still queued or running (scancel); a running run ends "
                                                     "cancelled, as with Ctrl-C");
    command->add_option("study", *study, "the study file the runs were submitted from")->required();
    command->add_option("runs", *runs, "only these runs (names, or ids of runs on other machines); default every one");
    return {command, [study, runs] {
                std::unique_ptr<Store> store;
                std::vector<RemoteRun> onHosts;
                std::vector<std::string> refused;
                int cancelled = 0;
                if (const int bad = refuseBadInput("cancel", [&] {
                        store = openExistingStudy(*study);
                        // Those started there (a start never answered is not asked for here).
                        for (const RemoteRun &run : unfinishedRemoteRuns(*store, *runs))
                            if (run.answered())
                                onHosts.push_back(run);
                        cancelled = cancelRemoteRuns(*store, *runs, refused);
                        if (!clusterJobs(*store).empty())
                            cancelled += cancelTasks(*store, Slurm(), *runs);
                    }))
                    return bad;
                for (const std::string &why : refused)
                    std::cerr << "optlog cancel: " << why << "\n";
                if (cancelled == 0 && refused.empty())
                    std::cerr << "optlog cancel: no run of " << *study << " is queued or running"
                              << (runs->empty() ? "" : " among those named") << "\n";
                // The copies here end as their runs end there, unless a follower is already on them.
                const int followed = onHosts.empty() ? kExitOk : followRuns(*study, onHosts, false);
                return int(refused.empty() && (followed == kExitOk || followed == kExitCancelled) ? kExitOk
                                                                                                  : kExitBadInput);
            }};
}

} // namespace optlog
