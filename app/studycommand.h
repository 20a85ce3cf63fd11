// SPDX-License-Identifier: MIT
// `optlog study` (app/studycommand.cpp) and its runs handed to a cluster (app/clustercommands.cpp).
#pragma once

#include "core/cluster/slurm.h"
#include "core/config/studyplan.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace optlog {

struct StudyRequest
{
    std::string plan = "default"; // built-in study name or a study TOML file
    std::string study;            // the study file; empty = studyFilePath("<plan name>.sqlite")
    std::vector<std::string> overrides;
    std::optional<int64_t> repeats; // replicates of every run over seeds; none = as the plan says
    bool force = false;             // train runs predicted not to fit the budget or the machine
    bool wide = false;              // the comparison as `optlog compare --wide` prints it
    std::string scheduler;          // "slurm": hand the runs to it as a job array; empty: train them here
    SubmitOptions submit;           // --partition, --max-parallel, --time, --sbatch-arg
    bool wait = false;              // with a scheduler: gather as the tasks end, then compare
    std::string host;               // train the runs on this SSH destination, one after another there
};
// The study's comparison as its plan asks for it (baseline, tolerance, per-run baselines).
int comparePlannedStudy(const StudyPlan &plan, const std::string &studyFile, bool wide);

// Runs on a cluster (app/clustercommands.cpp). `optlog study --scheduler slurm`: gathers what earlier
// jobs finished, then submits the plan's runs still to do (planRuns' todo less those queued) as
// one job array, each task training into a shard of its own; with `wait`, gathers as
// they end and compares.
int clusterStudyCommand(const StudyRequest &request, const StudyPlan &plan, const std::string &studyFile,
                        const std::string &self);

} // namespace optlog
