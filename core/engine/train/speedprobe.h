// SPDX-License-Identifier: MIT
#pragma once

#include "core/engine/kernels/gemm.h"
#include "core/engine/machine/hostsyncs.h"

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <chrono>
#include <cstdint>

namespace optlog {

// The machine-speed index beside the loop (calibration.h): a fixed matmul, timed once before the
// first step and then every `every` steps, outside the steps' time. A change in it during a run is
// the machine changing under the run, not the technique. The probes take at most 1% of the loop's
// time: on a small model, where a step takes milliseconds, a probe waits until the loop has run a
// hundred times as long as the probes would take. `every` 0: the index is never measured. A probe
// waits for the device before and after its timing (counted in `syncs`), so it is taken only where
// the host has just read the step metrics and the device has nothing queued.
class SpeedProbe
{
public:
    SpeedProbe(int64_t every, at::ScalarType dtype, c10::Device device, ProductPaths paths, HostSyncs &syncs);

    // Before the first step (`firstStep`) of a loop that has steps to take: its starting index, and
    // the loop's clock.
    void loopBegins(int64_t firstStep);
    // The index before the loop's first step (0 when never measured): that step reports it.
    double startingGflops() const { return m_startingGflops; }
    // After the steps up to `step` were read: the index measured now, or 0 when none is due (none
    // since the last multiple of `every` steps was passed, or over the 1% share).
    double after(int64_t step);

private:
    static constexpr double kShareOfLoop = 0.01;
    double measure(); // the index, and the seconds it took into m_lastProbeSeconds

    int64_t m_every;
    at::ScalarType m_dtype;
    c10::Device m_device;
    ProductPaths m_paths;
    HostSyncs &m_syncs;
    int64_t m_probedPeriods = 0; // (step + 1) / every at the last probe, or where the loop began
    double m_startingGflops = 0;
    double m_lastProbeSeconds = 0;
    double m_probeSeconds = 0; // of the probes after the first
    std::chrono::steady_clock::time_point m_loopStart;
};

} // namespace optlog
