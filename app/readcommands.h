// SPDX-License-Identifier: MIT
// `optlog compare` (app/readcommands.cpp), which `optlog study` ends with.
#pragma once

#include "core/analysis/studycomparison.h"

#include <string>

namespace optlog {

struct CompareRequest
{
    std::string study;
    ComparisonRequest comparison;
    bool wide = false; // every column on one line per run, for scripts; else within 120 columns
};
inline constexpr const char *kWideHelp = "print every column of the verdict table on one line per run, for scripts "
                                         "(default: within 120 columns, the verdicts in full below)";
int compareCommand(const CompareRequest &request);

} // namespace optlog
