// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace optlog {

// What the rest of the machine took while optlog measured it (the matmul peak, `optlog tune`'s
// candidate runs): the CPU time of every other process, and a virtual machine's steal time,
// each as a share of all the machine's CPUs over the interval (docs/measurement.md, "busy").
struct MachineLoad
{
    double seconds = 0;     // wall time measured over
    double othersShare = 0; // other processes' CPU time / (wall x logical CPUs)
    double stealShare = 0;  // the hypervisor's steal time, likewise
    double loadAverage = 0; // the 1-minute load average at the end, for the message

    // Disturbed: others or steal took more than the share allowed (busyShareAllowed()).
    bool busy() const;
    // "other processes took 48% of the 2 CPUs, steal 0%, load 3.1".
    std::string describe() const;
};

// The share of the machine others may take before a measurement counts as disturbed: 0.2, or
// OPTLOG_BUSY_SHARE (0 to 1; 1 counts none as disturbed: a machine always this busy, the test
// suite under ctest -j2). Throws InputError for a value that is not a number from 0 to 1.
double busyShareAllowed();

// Runs `measure` (attempt 1, 2, ...) until one ran while the machine was quiet, `attempts` have
// run, or `measure` returns false (it failed: measuring again would not help), a second's pause
// between attempts. Returns the load over the last attempt: busy() where every one was disturbed.
MachineLoad measureWhileQuiet(int attempts, const std::function<bool(int attempt)> &measure);

// Started at construction; load() reads what the machine did since. Counts this process's own
// CPU time and that of its children it has waited for (a candidate run of `optlog tune`) as its
// own, not as others'.
class MachineLoadMeter
{
public:
    MachineLoadMeter();
    MachineLoad load() const;

private:
    struct Sample
    {
        double busySeconds = 0;  // all CPUs' non-idle time, steal excluded
        double stealSeconds = 0; // all CPUs' steal
        double totalSeconds = 0; // all CPUs' time, idle included
        double ownSeconds = 0;   // this process's and its waited-for children's CPU time
        std::chrono::steady_clock::time_point at;
    };
    static Sample sample();
    Sample m_start;
};

} // namespace optlog
