// SPDX-License-Identifier: MIT
#pragma once

namespace optlog {

// Some runtime choices must be in the environment before LibTorch's libraries load (OpenMP
// reads OMP_WAIT_POLICY once, at start-up). When optlog's chosen value is missing, this sets
// it and re-executes the same binary with the same arguments; it never overrides a value the
// user or the system already set, even an empty one. Returns only when nothing needed setting.
void relaunchWithRuntimeVariables(char **argv);

} // namespace optlog
