// SPDX-License-Identifier: MIT
#include "app/commands.h"

#include "core/config/config.h"
#include "core/config/studyplan.h"
#include "core/store/store.h"

#include <iostream>

#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

namespace optlog {

namespace {

// Runs `optlog run` as a child process and waits for it: one engine process per run gives each
// run its own clean peak RSS and keeps a crash of one run out of the others.
int runEngine(const std::string &self, const std::vector<std::string> &arguments)
{
    std::vector<char *> argv;
    argv.push_back(const_cast<char *>(self.c_str()));
    for (const auto &a : arguments)
        argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    pid_t pid = 0;
    if (posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv.data(), environ) != 0)
        return kExitFailed;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : kExitFailed;
}

} // namespace

int studyCommand(const StudyRequest &request, const std::string &self)
{
    StudyPlan plan;
    std::vector<RunConfig> configs;
    try {
        plan = loadStudyPlan(request.plan);
        for (auto &run : plan.runs) {
            run.overrides.insert(run.overrides.end(), request.overrides.begin(), request.overrides.end());
            configs.push_back(run.config());
        }
    } catch (const ConfigError &e) {
        std::cerr << "optlog study: " << e.what() << "\n";
        return kExitBadInput;
    }
    const std::string studyFile = request.study.empty() ? plan.name + ".sqlite" : request.study;

    for (size_t i = 0; i < plan.runs.size(); ++i) {
        const PlannedRun &run = plan.runs[i];
        const std::string configText = toToml(configs[i]);
        bool done = false;
        try {
            Store store(studyFile);
            for (const auto &existing : store.runs())
                done = done || (existing.name == run.name && existing.outcome == Outcome::Completed
                                && existing.configToml == configText);
        } catch (const StoreError &e) {
            std::cerr << "optlog study: " << e.what() << "\n";
            return kExitBadInput;
        }
        if (done) {
            std::cerr << "optlog study: " << run.name << " already completed in " << studyFile << ", kept\n";
            continue;
        }
        std::cerr << "optlog study: run " << (i + 1) << "/" << plan.runs.size() << ": " << run.name << "\n";
        std::vector<std::string> arguments = {"run", "--preset", run.preset, "--db", studyFile};
        for (const auto &o : run.overrides)
            arguments.insert(arguments.end(), {"--set", o});
        arguments.insert(arguments.end(), {"--set", "name=\"" + run.name + "\""});
        const int code = runEngine(self, arguments);
        if (code == kExitCancelled || code == kExitBadInput) {
            std::cerr << "optlog study: stopped at " << run.name << "\n";
            return code;
        }
    }

    CompareRequest compare;
    compare.study = studyFile;
    compare.baseline = plan.baseline;
    compare.tolerance = plan.tolerance;
    for (const auto &run : plan.runs) {
        compare.runs.push_back(run.name);
        if (!run.baseline.empty())
            compare.baselineOf[run.name] = run.baseline;
    }
    return compareCommand(compare);
}

} // namespace optlog
