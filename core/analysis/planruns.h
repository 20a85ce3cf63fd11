// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/studyplan.h"
#include "core/store/store.h"

#include <functional>
#include <string>
#include <vector>

namespace optlog {

// Checks that a TorchScript module can take a run's config, beyond the config's own rules (blocks
// to checkpoint, say): throws NotApplicable for a run it cannot take, and InputError or
// ConfigError for a module that is broken. Loading a module needs LibTorch: the CLI checks in its
// own process (requireModelTakes), the workbench asks the engine binary (ModuleProbe).
using ModuleCheck = std::function<void(const RunConfig &)>;

// A run of a plan left out, and why.
struct SkippedRun
{
    std::string name;
    std::string reason;
};

// What a plan asks of a study.
struct PlanRuns
{
    StudyPlan plan;                     // the runs kept; baselines that were skipped re-pointed to the plan's
    std::vector<PlannedRun> replicates; // every replicate of the kept runs, in the plan's order
    std::vector<PlannedRun> todo;       // those of them the study has not completed
    std::vector<SkippedRun> skipped;    // the runs their model cannot take
    std::vector<std::string> notes;     // what skipping changed: "X is compared against Y, since ..."
};

// The one way from a plan to the runs to train, for `optlog study`, its Slurm job arrays and the
// workbench's queue and designer: each run's replicates over seeds, without the runs the model
// cannot take (checked by the config's rules, then by `checkModule` for a TorchScript run when
// given) and without those `existing` holds completed with the same config. Throws NotApplicable
// when the plan's baseline is skipped (nothing would be compared against), and ConfigError for
// any other mistake, before anything runs.
PlanRuns planRuns(StudyPlan plan, const std::vector<RunRecord> &existing, const ModuleCheck &checkModule = {});

// The replicates in `planned` that `existing` does not hold completed with the same config: a run
// whose config changed since (its preset, an override) runs again. Throws ConfigError for a run
// whose config does not load.
std::vector<PlannedRun> runsToDo(const std::vector<PlannedRun> &planned, const std::vector<RunRecord> &existing);

} // namespace optlog
