// SPDX-License-Identifier: MIT
#pragma once

#include <string>

namespace optlog {

// Some runtime choices must be in the environment before LibTorch's libraries load (OpenMP
// reads OMP_WAIT_POLICY once, OpenBLAS its OPENBLAS_CORETYPE). With `optlog tune`'s measured
// settings for this machine and the run's precision family it sets those (and passes the thread
// count on); without them it sets optlog's defaults and marks the run untuned. It re-executes
// the same binary with the same arguments when it set a variable, and never overrides a value
// the user or the system already set, even an empty one. Returns only when nothing needed setting.
void relaunchWithRuntimeVariables(char **argv, const std::string &precisionMode);

} // namespace optlog
