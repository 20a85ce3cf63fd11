// SPDX-License-Identifier: MIT
#include "core/engine/run/stopsignals.h"

#include <csignal>
#include <thread>

#include <pthread.h>
#include <unistd.h>

namespace optlog {

namespace {

std::atomic<bool> g_stopRequested{false};

sigset_t stopSignals()
{
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    return stop;
}

// After the first stop signal, the next one of either kind gets the default action.
void endOnTheNextStopSignal()
{
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
}

void requestStop(int)
{
    g_stopRequested.store(true);
    endOnTheNextStopSignal();
}

} // namespace

void holdStopSignals()
{
    const sigset_t stop = stopSignals();
    sigprocmask(SIG_BLOCK, &stop, nullptr);
}

// Stopped runs that aborted with a corrupted heap inside oneDNN's sgemm (docs/benchmarks.md) were
// why the signals are taken by a thread of their own rather than by a handler, which runs on
// whichever thread the kernel picks, on that thread's stack; that this was their cause is not
// shown. The handler stays for threads started before the signals were blocked, to which the
// kernel may deliver them instead: where the process did not re-execute (its variables already
// set), a library's thread is there before main().
void watchStopSignals()
{
    std::signal(SIGINT, requestStop);
    std::signal(SIGTERM, requestStop);
    std::thread([] {
        const sigset_t stop = stopSignals();
        int signal = 0;
        if (sigwait(&stop, &signal) != 0)
            return;
        g_stopRequested.store(true);
        endOnTheNextStopSignal();
        // Only this thread takes the next one, and must be alive to: its default action ends the process.
        pthread_sigmask(SIG_UNBLOCK, &stop, nullptr);
        for (;;)
            pause();
    }).detach();
}

const std::atomic<bool> &stopRequested()
{
    return g_stopRequested;
}

} // namespace optlog
