// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"

#include <string>
#include <vector>

namespace optlog {

// One run of a study: a preset plus `key=value` overrides, and how often to repeat it over seeds.
struct PlannedRun
{
    static constexpr int64_t kMaxRepeats = 100;

    std::string name;
    std::string preset;
    std::string configFile; // a TOML config applied after the preset; empty = none
    std::vector<std::string> overrides;
    std::string baseline;       // compared against this run instead of the study's baseline; empty = the study's
    int64_t repeats = 1;        // replicates over seeds: 1 to kMaxRepeats
    std::vector<int64_t> seeds; // their train.seed values; empty = repeats seeds from the config's own
    // Made from a stored run ("run again with changes"): `optlog run --from`'s STUDY:RUN and that
    // run's config, which the overrides then change (instead of a preset and a file).
    std::string from;
    std::string fromToml;
    // Or a stopped run of the study resumed from its newest checkpoint (`optlog run --resume`), with
    // its own config and where it trained (a host's run on its host): its id. Then only the name
    // is read besides.
    std::string resume;

    RunConfig config() const;
};

// The arguments of `optlog run` that train `run` into `study`: its source (--from, else --preset
// and --config), its overrides, then its name; or `--resume STUDY RUN` for a resumed one. The one place the engine's command line is
// written: `optlog study`, replicates, `optlog tune` and the workbench's queue all start runs so.
// The one thing it does not carry is the machine's tuning, which must be in the environment
// before LibTorch's libraries load: the launcher hands it to the engine in the variables that
// docs/environment.md lists as "launcher → engine" (OPTLOG_TUNED_THREADS, OPTLOG_TUNED_GEMM,
// OPTLOG_TUNING, OPTLOG_SET_VARIABLES, with OMP_WAIT_POLICY and OPENBLAS_CORETYPE).
std::vector<std::string> runArguments(const PlannedRun &run, const std::string &study);

// The runs to execute for one planned run: itself when it has one seed, else one replicate per
// seed, named "<name> seed <s>" and grouped as <name>, each differing from the others only in
// train.seed. Throws ConfigError naming `repeats` or `seeds` for a count out of range, duplicate
// seeds, or seeds that disagree with repeats.
std::vector<PlannedRun> replicatesOf(const PlannedRun &run);

// A study file (resources/studies/*.toml): the runs a comparison needs and its baseline.
struct StudyPlan
{
    std::string name;
    std::string baseline;    // run name the others are compared against
    double tolerance = 0.02; // nats per token: validation-loss difference counted as noise
    std::vector<PlannedRun> runs;
};

// `source` is a built-in study name or a path to a study TOML file. Every run's config is
// built and validated here, so a bad study fails before anything runs.
StudyPlan loadStudyPlan(const std::string &source);

// `plan` as a study file that loadStudyPlan reads back to the same configs, standing alone: a run
// made from a stored run or from a config file is written as the default preset and each field
// its config changes, so the file needs neither (the workbench hands its queue to Slurm so).
std::string studyPlanToml(const StudyPlan &plan);

} // namespace optlog
