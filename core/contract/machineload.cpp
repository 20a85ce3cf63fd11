// SPDX-License-Identifier: MIT
#include "core/contract/machineload.h"

#include "core/contract/inputerror.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include <sys/resource.h>
#include <unistd.h>

namespace optlog {

namespace {

// Where OPTLOG_BUSY_SHARE is unset: a neighbour that holds a fifth of the machine changes a
// 2-core matmul peak by more than the 5% that judges a peak stale (kStalePeakMargin).
constexpr double kDefaultBusyShare = 0.2;

double cpuSeconds(const rusage &usage)
{
    return double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
           + double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

} // namespace

bool MachineLoad::busy() const
{
    const double allowed = busyShareAllowed();
    return allowed < 1 && (othersShare > allowed || stealShare > allowed);
}

std::string MachineLoad::describe() const
{
    char text[160];
    std::snprintf(text, sizeof(text), "other processes took %.0f%% of the %u CPUs, steal %.0f%%, load %.1f",
                  100 * othersShare, std::thread::hardware_concurrency(), 100 * stealShare, loadAverage);
    return text;
}

double busyShareAllowed()
{
    const char *setting = std::getenv("OPTLOG_BUSY_SHARE");
    if (!setting)
        return kDefaultBusyShare;
    char *end = nullptr;
    const double share = std::strtod(setting, &end);
    if (end == setting || *end != '\0' || !std::isfinite(share) || share < 0 || share > 1)
        throw InputError("OPTLOG_BUSY_SHARE=\"" + std::string(setting)
                         + "\": expected the share of the machine other processes may take while optlog measures "
                           "it, from 0 to 1 (such as 0.2; 1 never counts a measurement as disturbed)");
    return share;
}

MachineLoadMeter::MachineLoadMeter()
    : m_start(sample())
{ }

MachineLoadMeter::Sample MachineLoadMeter::sample()
{
    Sample s;
    s.at = std::chrono::steady_clock::now();
    // "cpu  user nice system idle iowait irq softirq steal guest guest_nice", in clock ticks
    // (guest time is within user's already).
    std::ifstream stat("/proc/stat");
    std::string line, label;
    if (std::getline(stat, line)) {
        std::istringstream fields(line);
        double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
        fields >> label >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
        const double tick = double(sysconf(_SC_CLK_TCK));
        s.busySeconds = (user + nice + system + irq + softirq) / tick;
        s.stealSeconds = steal / tick;
        s.totalSeconds = (user + nice + system + idle + iowait + irq + softirq + steal) / tick;
    }
    rusage self{}, children{};
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
    s.ownSeconds = cpuSeconds(self) + cpuSeconds(children);
    return s;
}

MachineLoad MachineLoadMeter::load() const
{
    const Sample end = sample();
    MachineLoad load;
    load.seconds = std::chrono::duration<double>(end.at - m_start.at).count();
    const double total = end.totalSeconds - m_start.totalSeconds;
    if (total > 0) {
        const double others = (end.busySeconds - m_start.busySeconds) - (end.ownSeconds - m_start.ownSeconds);
        load.othersShare = std::max(0.0, others / total);
        load.stealShare = std::max(0.0, (end.stealSeconds - m_start.stealSeconds) / total);
    }
    std::ifstream("/proc/loadavg") >> load.loadAverage;
    return load;
}

MachineLoad measureWhileQuiet(int attempts, const std::function<bool(int attempt)> &measure)
{
    for (int attempt = 1;; ++attempt) {
        const MachineLoadMeter meter;
        const bool measured = measure(attempt);
        const MachineLoad load = meter.load();
        if (!measured || !load.busy() || attempt >= attempts)
            return load;
        std::this_thread::sleep_for(std::chrono::seconds(1));
    }
}

} // namespace optlog
