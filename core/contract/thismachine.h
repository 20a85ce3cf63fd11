// SPDX-License-Identifier: MIT
#pragma once

#include <string>

namespace optlog {

// This machine's name (gethostname): the host a run records it trained on, what a study's reader
// compares with it before judging a run's process dead, what `optlog host cancel` checks before
// it signals one, and the first word of a study a host keeps for a run from elsewhere. Every one
// of them asks here, so that they agree; "localhost" where the system gives no name.
std::string thisMachine();

} // namespace optlog
