// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <vector>

namespace optlog {

// Every environment variable optlog reads, sets for its own processes or passes on, in one table:
// docs/environment.md is written from it, and a test (tests/core/tst_environment.cpp) finds every
// name the sources read, and every name here in the sources.
struct EnvironmentVariable
{
    const char *name;
    const char *readBy;  // "engine", "launcher → engine", "Python module", "packaging/setup.sh", ...
    const char *meaning; // what it changes, and its default
};
const std::vector<EnvironmentVariable> &environmentVariables();
// The variables only the tests and benchmarks read or set (tests/), not optlog: listed apart.
const std::vector<EnvironmentVariable> &testEnvironmentVariables();

// The tables as docs/environment.md shows them: Markdown, a row per variable in each table's
// order, optlog's first, then the tests'.
std::string environmentVariablesMarkdown();

} // namespace optlog
