// SPDX-License-Identifier: MIT
#pragma once

#include "core/memorymodel/memorymodel.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace optlog {

// The analytic model's revision: a calibration fitted against another revision's predictions is
// stale. Raise it with every change to estimateMemory()'s saved activations or temporaries.
inline constexpr int kMemoryModelRevision = 4;

// One short run of the built-in GPT at a small shape on the device: the memory model's prediction
// and the measurement, by role. Temporaries here are the model's shape-dependent part: the device's
// workspaces (DeviceTerms) are taken off both sides.
struct CalibrationProbe
{
    int64_t width = 0, microbatch = 0, context = 0;
    int64_t stateBytes = 0; // parameters, gradients, optimizer state and master weights: exact
    int64_t predictedSaved = 0, predictedTemporaries = 0, predictedPeak = 0;
    int64_t measuredSaved = 0, measuredTemporaries = 0, measuredPeak = 0;
};

// measured = offset + scale x predicted + stateScale x model-state bytes, for one role. The last
// term is what an allocator counts above the model state's exact bytes (which the persistent roles
// report); the measured temporaries, the rest of the peak, hold it.
struct RoleCorrection
{
    double offsetBytes = 0;
    double scale = 1;
    double stateScale = 0;
    double at(double predictedBytes, double stateBytes) const
    {
        return offsetBytes + scale * predictedBytes + stateScale * stateBytes;
    }
};

// What a device's probes found of the memory model there, for one precision mode: a correction of
// the saved activations and of the temporaries, fitted to the probes, and how well it holds.
// A device is the chip (or CPU model) with its LibTorch version (DeviceTerms::describe()); the
// precision mode decides which ops run in which dtype.
struct DeviceCalibration
{
    std::string device;        // DeviceTerms::describe()
    std::string precisionMode; // precision.mode of the probes
    std::string environment;   // the workspaces' source when probed: a changed variable makes it stale
    int modelRevision = kMemoryModelRevision;
    std::vector<CalibrationProbe> probes; // smallest first; the last is the held-out shape
    RoleCorrection saved, temporaries;
    // Whether the correction is applied: not where the model alone is within kHoldsWithin at the
    // held-out shape, nor where the correction fitted without that shape does worse there.
    bool applied = false;
    double heldOutErrorBefore = 0; // relative error of the peak at the largest probe, uncorrected
    double heldOutErrorAfter = 0;  // and corrected by a fit to the other probes
    double residual = 0;           // the largest relative error of the peak over the probes, as predicted
    double seconds = 0;            // what probing took (0 from the cache)
    int64_t probeTokens = 0;       // tokens the probes trained on, steps included: the probe's bounded cost
    bool fromCache = false;

    // "calibrated on NVIDIA H200 ..., LibTorch 2.11.0, autocast-bf16: 6 probes, residual ≤ 1.2%"
    std::string describe() const;
    // The cache's key: the device and the precision mode.
    std::string key() const { return device + " | " + precisionMode; }
};

// The built-in GPT's shapes a calibration probes (2 layers, 4 heads), smallest first: the last is
// held out of the first fit. Two widths, so that what an allocator counts above the model state
// tells apart from the activations' terms.
struct CalibrationShape
{
    int64_t width, microbatch, context;
};
inline constexpr CalibrationShape kCalibrationShapes[] = {{128, 1, 32}, {128, 2, 64},  {128, 4, 64}, {128, 4, 128},
                                                          {256, 2, 64}, {256, 4, 128}, {256, 8, 128}};

// The model alone is taken as holding on a device where its peak is this close at the held-out shape.
inline constexpr double kHoldsWithin = 0.01;

// Fits the corrections to `probes` (at least three, smallest first), holding the last out first.
DeviceCalibration fitCalibration(DeviceCalibration calibration);

// `estimate` corrected by the calibration where it is applied, and named in it either way.
MemoryEstimate calibrated(MemoryEstimate estimate, const DeviceCalibration &calibration);

// Kept between runs in $XDG_CACHE_HOME/optlog/device-calibration.json by key(). An entry made by
// another revision of the memory model or under other workspace variables is stale: refused, with
// the reason in `*refusal` (probed again).
std::optional<DeviceCalibration> readCachedCalibration(const std::string &device, const std::string &precisionMode,
                                                       const std::string &environment, std::string *refusal = nullptr);
void writeCachedCalibration(const DeviceCalibration &calibration);

} // namespace optlog
