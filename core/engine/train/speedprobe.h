// SPDX-License-Identifier: MIT
#pragma once

#include "core/engine/kernels/gemm.h"

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <chrono>
#include <cstdint>

namespace optlog {

// The machine-speed index beside the loop (calibration.h): a fixed matmul, timed once before the
// first step and then every `every` steps, outside the steps' time. A change in it during a run is
// the machine changing under the run, not the technique. The probes take at most 1% of the loop's
// time: on a small model, where a step takes milliseconds, a probe waits until the loop has run a
// hundred times as long as the probes would take. `every` 0: the index is never measured.
class SpeedProbe
{
public:
    SpeedProbe(int64_t every, at::ScalarType dtype, c10::Device device, GemmLibrary library);

    // Before the first step of a loop that has steps to take: its starting index, and the loop's clock.
    void loopBegins();
    // After step `step` (of a loop that began at `firstStep`): the index measured for it, or 0
    // when none is due. The first step reports the starting index.
    double after(int64_t step, int64_t firstStep);

private:
    static constexpr double kShareOfLoop = 0.01;
    double measure(); // the index, and the seconds it took into m_lastProbeSeconds

    int64_t m_every;
    at::ScalarType m_dtype;
    c10::Device m_device;
    GemmLibrary m_library;
    double m_startingGflops = 0;
    double m_lastProbeSeconds = 0;
    double m_probeSeconds = 0; // of the probes after the first
    std::chrono::steady_clock::time_point m_loopStart;
};

} // namespace optlog
