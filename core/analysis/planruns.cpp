// SPDX-License-Identifier: MIT
#include "core/analysis/planruns.h"

#include "core/config/configerror.h"

#include <algorithm>

namespace optlog {

PlanRuns planRuns(StudyPlan plan, const std::vector<RunRecord> &existing, const ModuleCheck &checkModule)
{
    PlanRuns out;
    std::vector<PlannedRun> kept;
    for (auto &run : plan.runs) {
        try {
            const RunConfig config = run.config();
            if (checkModule && config.model.source == ModelSource::TorchScript)
                checkModule(config);
            kept.push_back(std::move(run));
        } catch (const NotApplicable &e) {
            if (run.name == plan.baseline)
                throw NotApplicable(e.field(), "the baseline run '" + run.name + "' cannot apply to this model, so "
                                                   + "the study has nothing to compare against: " + e.what());
            out.skipped.push_back({run.name, e.what()});
        }
    }
    const auto wasSkipped = [&out](const std::string &name) {
        return std::any_of(out.skipped.begin(), out.skipped.end(),
                           [&name](const SkippedRun &s) { return s.name == name; });
    };
    for (auto &run : kept)
        if (!run.baseline.empty() && wasSkipped(run.baseline)) {
            out.notes.push_back(run.name + " is compared against " + plan.baseline + ", since its own baseline "
                                + run.baseline + " was skipped");
            run.baseline.clear();
        }
    plan.runs = std::move(kept);
    for (const auto &run : plan.runs)
        for (auto &replicate : replicatesOf(run))
            out.replicates.push_back(std::move(replicate));
    out.todo = runsToDo(out.replicates, existing);
    out.plan = std::move(plan);
    return out;
}

std::vector<PlannedRun> runsToDo(const std::vector<PlannedRun> &planned, const std::vector<RunRecord> &existing)
{
    std::vector<PlannedRun> todo;
    for (const auto &run : planned) {
        const std::string config = toToml(run.config());
        const bool done = std::any_of(existing.begin(), existing.end(), [&](const RunRecord &r) {
            return r.name == run.name && r.outcome == Outcome::Completed && r.configToml == config;
        });
        if (!done)
            todo.push_back(run);
    }
    return todo;
}

} // namespace optlog
