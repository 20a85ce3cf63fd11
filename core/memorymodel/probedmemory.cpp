// SPDX-License-Identifier: MIT
#include "core/memorymodel/probedmemory.h"

#include "core/config/cachefile.h"
#include "core/contract/format.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

namespace optlog {

namespace {

constexpr const char *kCacheFile = "torchscript-probes.json";

// A probe's fields by name: each written and read in this one table.
constexpr std::pair<const char *, int64_t MemoryProbe::*> kProbeFields[]
    = {{"microbatch", &MemoryProbe::microbatch},
       {"context", &MemoryProbe::context},
       {"saved_activations", &MemoryProbe::savedActivations},
       {"temporaries", &MemoryProbe::temporaries},
       {"peak", &MemoryProbe::peak},
       {"pass_temporaries", &MemoryProbe::passTemporaries},
       {"step_temporaries", &MemoryProbe::stepTemporaries}};

nlohmann::json toJson(const MemoryProbe &p)
{
    nlohmann::json json = nlohmann::json::object();
    for (const auto &[key, field] : kProbeFields)
        json[key] = p.*field;
    return json;
}

// Throws nlohmann::json::exception for a missing field (a cache written before the fields had
// names reads as not probed, and is probed again).
MemoryProbe probeFrom(const nlohmann::json &p)
{
    MemoryProbe probe;
    for (const auto &[key, field] : kProbeFields)
        probe.*field = p.at(key).get<int64_t>();
    return probe;
}

nlohmann::json toJson(const ProbedMemory &probed)
{
    nlohmann::json probes = nlohmann::json::array(), replicates = nlohmann::json::array();
    for (const auto &p : probed.probes)
        probes.push_back(toJson(p));
    for (const auto &p : probed.replicates)
        replicates.push_back(toJson(p));
    return {{"probes", probes},
            {"replicates", replicates},
            {"held_out", toJson(probed.heldOut)},
            {"saved_activations", probed.savedActivations.coefficients},
            {"pass_temporaries", probed.passTemporaries.coefficients},
            {"step_temporaries", probed.stepTemporaries}};
}

} // namespace

std::string probeSetting(const RunConfig &config)
{
    return config.precision.mode + ", checkpoint_every " + std::to_string(config.memory.checkpointEvery) + ", "
           + config.runtime.device;
}

std::array<double, 5> ActivationFit::terms(int64_t microbatch, int64_t context)
{
    const double B = double(microbatch), T = double(context);
    return {1.0, T, T * T, B * T, B * T * T};
}

int64_t ActivationFit::at(int64_t microbatch, int64_t context) const
{
    const auto values = terms(microbatch, context);
    double bytes = 0;
    for (size_t j = 0; j < values.size(); ++j)
        bytes += coefficients[j] * values[j];
    return std::max<int64_t>(0, std::llround(bytes));
}

std::vector<MemoryProbe> ProbedMemory::sameShape() const
{
    std::vector<MemoryProbe> shape;
    if (replicates.empty())
        return shape;
    for (const auto &p : probes)
        if (p.microbatch == replicates.front().microbatch && p.context == replicates.front().context)
            shape.push_back(p);
    if (shape.empty())
        return shape; // not a fitted shape: nothing to scale
    shape.insert(shape.end(), replicates.begin(), replicates.end());
    return shape;
}

double ProbedMemory::batchRatio(int64_t MemoryProbe::*role, Batches batches) const
{
    const std::vector<MemoryProbe> shape = sameShape();
    if (shape.empty() || shape.front().*role <= 0)
        return 1.0;
    double worst = 0, sum = 0;
    for (const auto &p : shape) {
        worst = std::max(worst, double(p.*role));
        sum += double(p.*role);
    }
    return (batches == Batches::Worst ? worst : sum / double(shape.size())) / double(shape.front().*role);
}

int64_t ProbedMemory::scaled(int64_t fitted, int64_t MemoryProbe::*role, Batches batches) const
{
    const double ratio = batchRatio(role, batches);
    return ratio == 1.0 ? fitted : std::llround(double(fitted) * ratio); // a module that does not vary: exact
}

int64_t ProbedMemory::savedAt(int64_t microbatch, int64_t context, Batches batches) const
{
    return scaled(savedActivations.at(microbatch, context), &MemoryProbe::savedActivations, batches);
}

int64_t ProbedMemory::temporariesAt(int64_t microbatch, int64_t context, Batches batches) const
{
    return std::max(scaled(passTemporaries.at(microbatch, context), &MemoryProbe::passTemporaries, batches),
                    stepTemporaries - savedAt(microbatch, context, batches));
}

double ProbedMemory::dataSpread() const
{
    const std::vector<MemoryProbe> shape = sameShape();
    if (shape.size() < 2)
        return 0;
    std::vector<double> bytes;
    for (const auto &p : shape)
        bytes.push_back(double(p.savedActivations + p.passTemporaries));
    const auto [low, high] = std::minmax_element(bytes.begin(), bytes.end());
    const double mean = std::accumulate(bytes.begin(), bytes.end(), 0.0) / double(bytes.size());
    return mean > 0 ? (*high - *low) / 2 / mean : 0;
}

double ProbedMemory::heldOutError() const
{
    if (heldOut.peak <= 0)
        return 0;
    const int64_t state = heldOut.peak - heldOut.savedActivations - heldOut.temporaries;
    const int64_t predicted = state + savedAt(heldOut.microbatch, heldOut.context)
                              + temporariesAt(heldOut.microbatch, heldOut.context);
    return double(predicted - heldOut.peak) / double(heldOut.peak);
}

int64_t ProbedMemory::largestContext() const
{
    int64_t context = 0;
    for (const auto &p : probes)
        context = std::max(context, p.context);
    return context;
}

bool ProbedMemory::temporariesGrewWithMicrobatch() const
{
    const int64_t context = largestContext();
    std::optional<int64_t> one, two;
    for (const auto &p : probes) {
        if (p.context == context && p.microbatch == 1)
            one = p.passTemporaries;
        if (p.context == context && p.microbatch == 2)
            two = p.passTemporaries;
    }
    return one && two && *two > *one;
}

std::optional<ProbedMemory> readCachedProbes(const RunConfig &config, const std::string &sha256)
{
    const nlohmann::json cache = readJsonCache(cacheFilePath(kCacheFile));
    ProbedMemory probed;
    probed.sha256 = sha256;
    probed.fromCache = true;
    try {
        const nlohmann::json &module = cache.at(sha256);
        probed.parameterSizes = module.at("parameter_sizes").get<std::vector<int64_t>>();
        const nlohmann::json &entry = module.at("settings").at(probeSetting(config));
        for (const auto &p : entry.at("probes"))
            probed.probes.push_back(probeFrom(p));
        for (const auto &p : entry.at("replicates"))
            probed.replicates.push_back(probeFrom(p));
        probed.heldOut = probeFrom(entry.at("held_out"));
        using Coefficients = decltype(ActivationFit::coefficients);
        probed.savedActivations.coefficients = entry.at("saved_activations").get<Coefficients>();
        probed.passTemporaries.coefficients = entry.at("pass_temporaries").get<Coefficients>();
        probed.stepTemporaries = entry.at("step_temporaries").get<int64_t>();
    } catch (const nlohmann::json::exception &) {
        return std::nullopt; // not probed in this setting, or a damaged entry: probed again
    }
    // Probes of a shorter context than the config's are no answer: the fit would extrapolate.
    if (probed.probes.empty() || probed.largestContext() < config.model.contextLength)
        return std::nullopt;
    return probed;
}

void writeCachedProbes(const RunConfig &config, const ProbedMemory &probed)
{
    const std::string path = cacheFilePath(kCacheFile);
    updateJsonCache(path, [&](nlohmann::json &cache) {
        nlohmann::json &module = cache[probed.sha256];
        if (!module.is_object()
            || module.value("parameter_sizes", nlohmann::json()) != nlohmann::json(probed.parameterSizes))
            module = nlohmann::json::object(); // another file with this SHA-256 cannot be: a damaged entry
        module["parameter_sizes"] = probed.parameterSizes;
        module["settings"][probeSetting(config)] = toJson(probed);
    });
}

MemoryEstimate probedEstimate(const RunConfig &config, const ProbedMemory &probed, int64_t rank)
{
    MemoryEstimate e = modelStateEstimate(config, probed.parameterSizes, rank);
    const int64_t B = config.train.microbatch, T = config.model.contextLength;
    // The probes held one microbatch's token tensors; a step of accumulation holds them all.
    const int64_t tokens = (config.train.accumulation - 1) * microbatchTokenBytes(B, T);
    const std::string fit = "fitted to " + std::to_string(probed.probes.size()) + " probes of the module";
    e.roles.push_back({MemoryRole::SavedActivations, "mixed", 0, probed.savedAt(B, T), fit});
    e.roles.push_back({MemoryRole::Temporaries, "mixed", 0, probed.temporariesAt(B, T) + tokens, fit});
    e.activationsPredicted = true;
    e.peakBytes = 0;
    for (const auto &r : e.roles)
        e.peakBytes += r.bytes;
    e.source = "probes of the TorchScript module (sha256 " + probed.sha256.substr(0, 16) + ", "
               + std::to_string(probed.probes.size()) + " short runs at microbatch 1 and 2, contexts up to "
               + std::to_string(probed.largestContext()) + (probed.fromCache ? "; cached" : "") + ")";
    if (probed.heldOut.peak > 0)
        e.source += "; at microbatch " + std::to_string(probed.heldOut.microbatch) + ", which the fit did not see, "
                    + "the peak held within " + formatted("%.1f%%", 100 * std::abs(probed.heldOutError()));
    if (const double spread = probed.dataSpread(); spread > 0) {
        const int64_t expected = e.peakBytes - probed.savedAt(B, T) - probed.temporariesAt(B, T)
                                 + probed.savedAt(B, T, Batches::Expected)
                                 + probed.temporariesAt(B, T, Batches::Expected);
        const MemoryProbe &shape = probed.replicates.front();
        e.source += "; this module's memory varies with its data: ±" + formatted("%.1f%%", 100 * spread) + " over "
                    + std::to_string(probed.replicates.size() + 1) + " batches at this shape ("
                    + std::to_string(shape.microbatch) + " x " + std::to_string(shape.context)
                    + " tokens), so the peak predicted is the worst batch's (their mean's: " + formatBytes(expected)
                    + ")";
    }
    if (!probed.temporariesGrewWithMicrobatch())
        e.source += "; its temporaries did not grow from microbatch 1 to 2, so a larger shape's are a floor";
    return e;
}

} // namespace optlog
