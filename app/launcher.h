// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/studyplan.h"

#include <string>
#include <utility>
#include <vector>

namespace optlog {

// Some runtime choices must be in the environment before LibTorch's libraries load (OpenMP
// reads OMP_WAIT_POLICY once, OpenBLAS its OPENBLAS_CORETYPE). With `optlog tune`'s measured
// settings for this machine and the run's precision family it sets those (and passes the thread
// count on); without them it sets optlog's defaults and marks the run untuned. It re-executes
// the same binary with the same arguments when it set a variable, and never overrides a value
// the user or the system already set, even an empty one. Returns only when nothing needed setting.
void relaunchWithRuntimeVariables(char **argv, const std::string &precisionMode);

// This executable's path (/proc/self/exe), else `argv0`: what the engine runs as its children.
std::string selfPath(const char *argv0);

// The arguments of `optlog run` that train `run` into `study`.
std::vector<std::string> runArguments(const PlannedRun &run, const std::string &study);

// Runs `self` with `arguments` as a child process, with `variables` set over this process's
// environment, and waits: one engine process per run gives each run its own clean peak RSS and
// keeps a crash of one run out of the others. `quiet` sends the child's output to /dev/null.
// Returns its exit code; kExitFailed when it could not start or a signal ended it.
int runChild(const std::string &self, const std::vector<std::string> &arguments,
             const std::vector<std::pair<std::string, std::string>> &variables = {}, bool quiet = false);

} // namespace optlog
