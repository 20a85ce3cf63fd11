// SPDX-License-Identifier: MIT
// `optlog study`: every run of a study plan the study has not completed, each in its own engine
// process, then the comparison.
#include "app/commands.h"
#include "app/launcher.h"

#include "core/analysis/analysis.h"
#include "core/config/studyplan.h"
#include "core/store/store.h"

#include <iostream>

namespace optlog {

int studyCommand(const StudyRequest &request, const std::string &self)
{
    StudyPlan plan;
    std::vector<PlannedRun> todo;
    std::string studyFile;
    if (const int refused = refuseBadInput("study", [&] {
            plan = loadStudyPlan(request.plan);
            for (auto &run : plan.runs) {
                run.overrides.insert(run.overrides.end(), request.overrides.begin(), request.overrides.end());
                run.config(); // validates the override in every run before anything runs
            }
            studyFile = request.study.empty() ? plan.name + ".sqlite" : request.study;
            todo = runsToDo(plan.runs, Store(studyFile).runs());
        }))
        return refused;

    for (size_t i = 0; i < plan.runs.size(); ++i) {
        const PlannedRun &run = plan.runs[i];
        const bool needed = std::any_of(todo.begin(), todo.end(), [&run](const PlannedRun &t) { return t.name == run.name; });
        if (!needed) {
            std::cerr << "optlog study: " << run.name << " already completed in " << studyFile << ", kept\n";
            continue;
        }
        std::cerr << "optlog study: run " << (i + 1) << "/" << plan.runs.size() << ": " << run.name << "\n";
        std::vector<std::string> arguments = {"run", "--preset", run.preset, "--db", studyFile};
        for (const auto &o : run.overrides)
            arguments.insert(arguments.end(), {"--set", o});
        arguments.insert(arguments.end(), {"--set", "name=\"" + run.name + "\""});
        const int code = runChild(self, arguments);
        if (code == kExitCancelled || code == kExitBadInput) {
            std::cerr << "optlog study: stopped at " << run.name << "\n";
            return code;
        }
    }

    CompareRequest compare;
    compare.study = studyFile;
    compare.comparison.baseline = plan.baseline;
    compare.comparison.tolerance = plan.tolerance;
    for (const auto &run : plan.runs) {
        compare.comparison.runs.push_back(run.name);
        if (!run.baseline.empty())
            compare.comparison.baselineOf[run.name] = run.baseline;
    }
    return compareCommand(compare);
}

} // namespace optlog
