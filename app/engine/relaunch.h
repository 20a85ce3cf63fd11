// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"

#include <functional>
#include <string>

namespace optlog {

// Some runtime choices must be in the environment before LibTorch's libraries load (OpenMP
// reads OMP_WAIT_POLICY once, OpenBLAS its OPENBLAS_CORETYPE). With `optlog tune`'s measured
// settings for this machine and the run's precision family it sets those (and passes the thread
// count on). Where this machine has none for the family, it first makes them with a quick probe
// (`optlog tune --quick`, under a minute, one line on stderr before and after), one process at a
// time, unless OPTLOG_PROBE_UNTUNED=0: then it sets optlog's defaults and marks the run untuned.
// It re-executes the same binary with the same arguments when it set a variable, and never
// overrides a value the user or the system already set, even an empty one. Returns only when
// nothing needed setting.
void relaunchWithRuntimeVariables(char **argv, const std::string &precisionMode);

// Re-executes with the tuned variables for the run's precision (relaunchWithRuntimeVariables). A
// config that does not load is refused by the command itself, at once: no need to start again.
void relaunchFor(char **argv, const std::function<RunConfig()> &config);

} // namespace optlog
