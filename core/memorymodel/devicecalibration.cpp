// SPDX-License-Identifier: MIT
#include "core/memorymodel/devicecalibration.h"

#include "core/config/cachefile.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace optlog {

namespace {

constexpr const char *kCacheFile = "device-calibration.json";

// The slopes of y on the columns, with an offset: least squares on the centred values. A column
// that does not spread (its deviation under 5% of its mean) is left out, with slope 0.
std::vector<double> leastSquares(const std::vector<std::vector<double>> &columns, const std::vector<double> &y,
                                 double *offset)
{
    const size_t n = y.size(), k = columns.size();
    const auto mean = [n](const std::vector<double> &v) {
        double sum = 0;
        for (const double x : v)
            sum += x;
        return sum / double(n);
    };
    std::vector<size_t> used;
    std::vector<double> means(k), scales(k, 1);
    for (size_t j = 0; j < k; ++j) {
        means[j] = mean(columns[j]);
        double variance = 0;
        for (const double x : columns[j])
            variance += (x - means[j]) * (x - means[j]) / double(n);
        scales[j] = std::sqrt(variance);
        if (scales[j] > 0.05 * std::abs(means[j]) && scales[j] > 0)
            used.push_back(j);
    }
    const double meanY = mean(y);
    // The normal equations of the used, centred and scaled columns, solved by elimination.
    const size_t m = used.size();
    std::vector<std::vector<double>> a(m, std::vector<double>(m + 1, 0));
    for (size_t r = 0; r < m; ++r)
        for (size_t i = 0; i < n; ++i) {
            const double xr = (columns[used[r]][i] - means[used[r]]) / scales[used[r]];
            for (size_t c = 0; c < m; ++c)
                a[r][c] += xr * (columns[used[c]][i] - means[used[c]]) / scales[used[c]];
            a[r][m] += xr * (y[i] - meanY);
        }
    std::vector<double> slopes(k, 0);
    for (size_t c = 0; c < m; ++c) {
        size_t pivot = c;
        for (size_t r = c + 1; r < m; ++r)
            if (std::abs(a[r][c]) > std::abs(a[pivot][c]))
                pivot = r;
        std::swap(a[c], a[pivot]);
        if (std::abs(a[c][c]) < 1e-9 * double(n)) { // collinear: the offset alone
            std::fill(slopes.begin(), slopes.end(), 0);
            *offset = meanY;
            for (size_t j = 0; j < k; ++j)
                *offset -= slopes[j] * means[j];
            return slopes;
        }
        for (size_t r = 0; r < m; ++r)
            if (r != c) {
                const double factor = a[r][c] / a[c][c];
                for (size_t q = c; q <= m; ++q)
                    a[r][q] -= factor * a[c][q];
            }
    }
    for (size_t c = 0; c < m; ++c)
        slopes[used[c]] = a[c][m] / a[c][c] / scales[used[c]];
    *offset = meanY;
    for (size_t j = 0; j < k; ++j)
        *offset -= slopes[j] * means[j];
    return slopes;
}

// The role's correction over `probes`: what the model missed (measured less predicted) fitted to
// an offset, the prediction and, where `withState`, the model state's bytes. A scale that would
// not come out positive is left at 1.
RoleCorrection fitted(const std::vector<CalibrationProbe> &probes, int64_t CalibrationProbe::*predicted,
                      int64_t CalibrationProbe::*measured, bool withState)
{
    std::vector<double> missed, prediction, state;
    for (const auto &p : probes) {
        missed.push_back(double(p.*measured - p.*predicted));
        prediction.push_back(double(p.*predicted));
        state.push_back(withState ? double(p.stateBytes) : 0.0);
    }
    RoleCorrection correction;
    std::vector<double> slopes = leastSquares({prediction, state}, missed, &correction.offsetBytes);
    if (1 + slopes[0] <= 0)
        slopes = leastSquares({std::vector<double>(probes.size(), 0.0), state}, missed, &correction.offsetBytes);
    correction.scale = 1 + slopes[0];
    correction.stateScale = slopes[1];
    return correction;
}

RoleCorrection savedFit(const std::vector<CalibrationProbe> &probes)
{
    return fitted(probes, &CalibrationProbe::predictedSaved, &CalibrationProbe::measuredSaved, false);
}

RoleCorrection temporariesFit(const std::vector<CalibrationProbe> &probes)
{
    return fitted(probes, &CalibrationProbe::predictedTemporaries, &CalibrationProbe::measuredTemporaries, true);
}

double peakError(const CalibrationProbe &p, const RoleCorrection &saved, const RoleCorrection &temporaries)
{
    const double state = double(p.stateBytes);
    const double predicted = double(p.predictedPeak - p.predictedSaved - p.predictedTemporaries)
                             + saved.at(double(p.predictedSaved), state)
                             + temporaries.at(double(p.predictedTemporaries), state);
    return std::abs(predicted - double(p.measuredPeak)) / double(std::max<int64_t>(1, p.measuredPeak));
}

std::string percentToTenths(double fraction)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.1f%%", 100 * fraction);
    return text;
}

} // namespace

std::string DeviceCalibration::describe() const
{
    std::string text = (applied ? "calibrated on " : "checked on ") + device + ", " + precisionMode + ": "
                       + std::to_string(probes.size()) + " probes, ";
    text += applied ? "residual ≤ " + percentToTenths(residual) + " (the model alone was "
                          + percentToTenths(heldOutErrorBefore) + " off at the largest probe; corrected, "
                          + percentToTenths(heldOutErrorAfter) + ")"
                    : "the model holds within " + percentToTenths(heldOutErrorBefore)
                          + " at the largest probe, not corrected";
    return text + (fromCache ? "; cached" : "");
}

DeviceCalibration fitCalibration(DeviceCalibration calibration)
{
    const auto &probes = calibration.probes;
    if (probes.size() < 3)
        throw std::invalid_argument("a device calibration needs at least three probes");
    const std::vector<CalibrationProbe> fitting(probes.begin(), probes.end() - 1);
    const CalibrationProbe &heldOut = probes.back();
    calibration.heldOutErrorBefore = peakError(heldOut, {}, {});
    calibration.heldOutErrorAfter = peakError(heldOut, savedFit(fitting), temporariesFit(fitting));
    calibration.applied = calibration.heldOutErrorBefore > kHoldsWithin
                          && calibration.heldOutErrorAfter < calibration.heldOutErrorBefore;
    calibration.saved = calibration.temporaries = RoleCorrection{};
    if (calibration.applied) {
        calibration.saved = savedFit(probes);
        calibration.temporaries = temporariesFit(probes);
    }
    calibration.residual = 0;
    for (const auto &p : probes)
        calibration.residual = std::max(calibration.residual, peakError(p, calibration.saved, calibration.temporaries));
    return calibration;
}

MemoryEstimate calibrated(MemoryEstimate estimate, const DeviceCalibration &calibration)
{
    estimate.calibration = calibration.describe();
    if (!calibration.applied)
        return estimate;
    const double workspaces = double(estimate.device.workspaceBytes());
    const double state = double(estimate.stateBytes());
    for (auto &role : estimate.roles) {
        const double before = double(role.bytes);
        if (role.role == MemoryRole::SavedActivations)
            role.bytes = std::max<int64_t>(0, std::llround(calibration.saved.at(before, state)));
        else if (role.role == MemoryRole::Temporaries)
            role.bytes = std::llround(workspaces
                                      + std::max(0.0, calibration.temporaries.at(before - workspaces, state)));
        else
            continue;
        role.note += "; calibrated";
        estimate.peakBytes += role.bytes - int64_t(before);
    }
    return estimate;
}

std::optional<DeviceCalibration> readCachedCalibration(const std::string &device, const std::string &precisionMode,
                                                       const std::string &environment, std::string *refusal)
{
    DeviceCalibration c;
    c.device = device;
    c.precisionMode = precisionMode;
    c.fromCache = true;
    const nlohmann::json cache = readJsonCache(cacheFilePath(kCacheFile));
    const auto found = cache.find(c.key());
    if (found == cache.end())
        return std::nullopt;
    const auto refuse = [refusal](const std::string &why) {
        if (refusal)
            *refusal = why;
        return std::nullopt;
    };
    try {
        const nlohmann::json &entry = *found;
        c.modelRevision = entry.at("model_revision").get<int>();
        c.environment = entry.at("environment").get<std::string>();
        if (c.modelRevision != kMemoryModelRevision)
            return refuse("stale: fitted to revision " + std::to_string(c.modelRevision) + " of the memory model, now "
                          + std::to_string(kMemoryModelRevision));
        if (c.environment != environment)
            return refuse("stale: probed with " + c.environment + ", now " + environment);
        for (const auto &p : entry.at("probes"))
            c.probes.push_back({p.at(0).get<int64_t>(), p.at(1).get<int64_t>(), p.at(2).get<int64_t>(),
                                p.at(3).get<int64_t>(), p.at(4).get<int64_t>(), p.at(5).get<int64_t>(),
                                p.at(6).get<int64_t>(), p.at(7).get<int64_t>(), p.at(8).get<int64_t>(),
                                p.at(9).get<int64_t>()});
        c.probeTokens = entry.at("probe_tokens").get<int64_t>();
    } catch (const nlohmann::json::exception &) {
        return refuse("damaged");
    }
    if (c.probes.size() < 3)
        return refuse("damaged");
    // The fit is made again from the probes, so an edited coefficient cannot be taken.
    return fitCalibration(c);
}

void writeCachedCalibration(const DeviceCalibration &c)
{
    const std::string path = cacheFilePath(kCacheFile);
    nlohmann::json probes = nlohmann::json::array();
    for (const auto &p : c.probes)
        probes.push_back({p.width, p.microbatch, p.context, p.stateBytes, p.predictedSaved, p.predictedTemporaries,
                          p.predictedPeak, p.measuredSaved, p.measuredTemporaries, p.measuredPeak});
    const nlohmann::json entry = {{"model_revision", c.modelRevision},
                                  {"environment", c.environment},
                                  {"probes", probes},
                                  {"probe_tokens", c.probeTokens},
                                  {"probe_seconds", c.seconds},
                                  // For a reader: the fit is made again from the probes when read.
                                  {"applied", c.applied},
                                  {"saved", {c.saved.offsetBytes, c.saved.scale, c.saved.stateScale}},
                                  {"temporaries",
                                   {c.temporaries.offsetBytes, c.temporaries.scale, c.temporaries.stateScale}},
                                  {"residual", c.residual}};
    updateJsonCache(path, [&](nlohmann::json &cache) { cache[c.key()] = entry; });
}

} // namespace optlog
