// SPDX-License-Identifier: MIT
#include "core/engine/run/stopsignals.h"

#include <csignal>
#include <thread>

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace optlog {

namespace {

std::atomic<bool> g_stopRequested{false};
pid_t g_holdingThread = 0; // the thread that called holdStopSignals()

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

// A stop signal the kernel gave to a thread started before the signals were held (a library's,
// started before main()) goes on to the holding thread, which holds it as it would one sent to the
// process. Sent to that thread alone, it stays pending across the re-exec, which keeps the
// execing thread's pending signals; the default action here would end the process instead.
void sendToTheHoldingThread(int signal)
{
    syscall(SYS_tgkill, getpid(), g_holdingThread, signal);
}

} // namespace

void holdStopSignals()
{
    const sigset_t stop = stopSignals();
    sigprocmask(SIG_BLOCK, &stop, nullptr);
    g_holdingThread = pid_t(syscall(SYS_gettid));
    std::signal(SIGINT, sendToTheHoldingThread);
    std::signal(SIGTERM, sendToTheHoldingThread);
}

// The signals are taken by a thread of their own rather than by a handler, which runs on whichever
// thread the kernel picks, on that thread's stack: a handler's frame written on a thread inside
// oneDNN's sgemm corrupts the heap (docs/benchmarks.md, "Stopped runs that aborted";
// tests/bench/sgemm_under_signals). The handler stays for threads started before the signals were
// held, to which the kernel may deliver them instead: where the process did not re-execute (its
// variables already set), OpenBLAS's thread is there before main().
void watchStopSignals()
{
    std::signal(SIGINT, requestStop);
    std::signal(SIGTERM, requestStop);
    // One held until now, sent to the process or to this thread (which only this thread can take).
    const sigset_t stop = stopSignals();
    const timespec now{0, 0};
    const bool held = sigtimedwait(&stop, nullptr, &now) > 0;
    if (held) {
        g_stopRequested.store(true);
        endOnTheNextStopSignal();
    }
    std::thread([held] {
        const sigset_t stop = stopSignals();
        int signal = 0;
        if (!held) {
            if (sigwait(&stop, &signal) != 0)
                return;
            g_stopRequested.store(true);
            endOnTheNextStopSignal();
        }
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
