// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/studyplan.h"

#include <string>
#include <vector>

namespace optlog {

// One axis of a sweep grid: a config field and the values it takes.
struct SweepAxis
{
    std::string key;                 // dotted path, e.g. "train.microbatch"
    std::vector<std::string> values; // as written after --set key=, e.g. "4", "autocast-bf16"
};

// "4, 8,16" -> {"4", "8", "16"}: the designer's and the CLI's way to write an axis.
std::vector<std::string> splitSweepValues(const std::string &commaSeparated);

// Every combination of the axes' values over `base` (the first axis varies slowest), each named
// "<base name> <key>=<value> ...". Each run's config is built and validated here, so a bad value
// throws ConfigError naming the run before anything is queued. Axes with no values are ignored.
std::vector<PlannedRun> expandSweep(const PlannedRun &base, const std::vector<SweepAxis> &axes);

} // namespace optlog
