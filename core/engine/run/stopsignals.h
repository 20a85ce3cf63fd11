// SPDX-License-Identifier: MIT
#pragma once

#include <atomic>

namespace optlog {

// SIGINT and SIGTERM as a request to stop: the first ends a run at its next step as cancelled,
// with what it recorded; a second one, of either kind, gets the default action, so a hung run
// can still be killed from the terminal.
//
// Holds both signals (blocks them in this thread, and so in every thread started after it, and
// across an exec, since a signal mask survives it), so that a signal while starting is taken
// later instead of killing the process. One that a thread started earlier (a library's) is given
// comes back to this thread and is held here. Call it on the thread that will watch them.
void holdStopSignals();
// From now on the stop signals set the flag stopRequested() returns. One thread of their own
// takes them with sigwait, so that no signal interrupts a library's kernels, as a handler does;
// the handler stays for threads started before holdStopSignals(). A signal held until now is
// taken at once. Call it once.
void watchStopSignals();
// Set once a stop signal came.
const std::atomic<bool> &stopRequested();

} // namespace optlog
