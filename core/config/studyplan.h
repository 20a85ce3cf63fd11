// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"

#include <string>
#include <vector>

namespace optlog {

// One run of a study: a preset plus `key=value` overrides.
struct PlannedRun
{
    std::string name;
    std::string preset;
    std::vector<std::string> overrides;
    std::string baseline; // compared against this run instead of the study's baseline; empty = the study's

    RunConfig config() const;
};

// A study file (resources/studies/*.toml): the runs a comparison needs and its baseline.
struct StudyPlan
{
    std::string name;
    std::string baseline;     // run name the others are compared against
    double tolerance = 0.02;  // nats per token: validation-loss difference counted as noise
    std::vector<PlannedRun> runs;
};

// `source` is a built-in study name or a path to a study TOML file. Every run's config is
// built and validated here, so a bad study fails before anything runs.
StudyPlan loadStudyPlan(const std::string &source);

} // namespace optlog
