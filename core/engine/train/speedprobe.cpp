// SPDX-License-Identifier: MIT
#include "core/engine/train/speedprobe.h"

#include "core/engine/machine/calibration.h"
#include "core/engine/machine/device.h"

namespace optlog {

using Clock = std::chrono::steady_clock;

SpeedProbe::SpeedProbe(int64_t every, at::ScalarType dtype, c10::Device device, ProductPaths paths, HostSyncs &syncs)
    : m_every(every)
    , m_dtype(dtype)
    , m_device(device)
    , m_paths(paths)
    , m_syncs(syncs)
{ }

double SpeedProbe::measure()
{
    m_syncs.wait(SyncPurpose::SpeedProbe);
    const auto start = Clock::now();
    const double gflops = referenceKernelGflops(m_dtype, m_device, m_paths);
    m_syncs.wait(SyncPurpose::SpeedProbe);
    m_lastProbeSeconds = std::chrono::duration<double>(Clock::now() - start).count();
    return gflops;
}

void SpeedProbe::loopBegins(int64_t firstStep)
{
    if (m_every <= 0)
        return;
    m_startingGflops = measure();
    m_probedPeriods = firstStep / m_every;
    m_loopStart = Clock::now();
}

double SpeedProbe::after(int64_t step)
{
    if (m_every <= 0)
        return 0;
    const int64_t periods = (step + 1) / m_every;
    if (periods == m_probedPeriods)
        return 0;
    m_probedPeriods = periods;
    const double loopSeconds = std::chrono::duration<double>(Clock::now() - m_loopStart).count();
    if (m_probeSeconds + m_lastProbeSeconds > kShareOfLoop * loopSeconds)
        return 0;
    const double gflops = measure();
    m_probeSeconds += m_lastProbeSeconds;
    return gflops;
}

} // namespace optlog
