// SPDX-License-Identifier: MIT
#include "core/engine/train/speedprobe.h"

#include "core/engine/machine/calibration.h"
#include "core/engine/machine/device.h"

namespace optlog {

using Clock = std::chrono::steady_clock;

SpeedProbe::SpeedProbe(int64_t every, at::ScalarType dtype, c10::Device device, GemmLibrary library)
    : m_every(every)
    , m_dtype(dtype)
    , m_device(device)
    , m_library(library)
{ }

double SpeedProbe::measure()
{
    synchronize(m_device);
    const auto start = Clock::now();
    const double gflops = referenceKernelGflops(m_dtype, m_device, m_library);
    synchronize(m_device);
    m_lastProbeSeconds = std::chrono::duration<double>(Clock::now() - start).count();
    return gflops;
}

void SpeedProbe::loopBegins()
{
    if (m_every > 0)
        m_startingGflops = measure();
    m_loopStart = Clock::now();
}

double SpeedProbe::after(int64_t step, int64_t firstStep)
{
    if (step == firstStep)
        return m_startingGflops;
    if (m_every <= 0 || (step + 1) % m_every != 0)
        return 0;
    const double loopSeconds = std::chrono::duration<double>(Clock::now() - m_loopStart).count();
    if (m_probeSeconds + m_lastProbeSeconds > kShareOfLoop * loopSeconds)
        return 0;
    const double gflops = measure();
    m_probeSeconds += m_lastProbeSeconds;
    return gflops;
}

} // namespace optlog
