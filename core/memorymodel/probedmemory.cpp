// SPDX-License-Identifier: MIT
#include "core/memorymodel/probedmemory.h"

#include "core/config/cachefile.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace optlog {

namespace {

constexpr const char *kCacheFile = "torchscript-probes.json";

nlohmann::json toJson(const ProbedMemory &probed)
{
    nlohmann::json probes = nlohmann::json::array();
    for (const auto &p : probed.probes)
        probes.push_back({p.microbatch, p.context, p.savedActivations, p.temporaries, p.peak, p.passTemporaries});
    return {{"probes", probes},
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

std::array<double, 4> ActivationFit::terms(int64_t microbatch, int64_t context)
{
    const double B = double(microbatch), T = double(context);
    return {1.0, T, B * T, B * T * T};
}

int64_t ActivationFit::at(int64_t microbatch, int64_t context) const
{
    const auto values = terms(microbatch, context);
    double bytes = 0;
    for (size_t j = 0; j < values.size(); ++j)
        bytes += coefficients[j] * values[j];
    return std::max<int64_t>(0, std::llround(bytes));
}

int64_t ProbedMemory::temporariesAt(int64_t microbatch, int64_t context) const
{
    return std::max(passTemporaries.at(microbatch, context), stepTemporaries - savedActivations.at(microbatch, context));
}

bool ProbedMemory::temporariesGrewWithMicrobatch() const
{
    int64_t context = 0;
    for (const auto &p : probes)
        context = std::max(context, p.context);
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
            probed.probes.push_back({p.at(0).get<int64_t>(), p.at(1).get<int64_t>(), p.at(2).get<int64_t>(),
                                     p.at(3).get<int64_t>(), p.at(4).get<int64_t>(), p.at(5).get<int64_t>()});
        probed.savedActivations.coefficients = entry.at("saved_activations").get<std::array<double, 4>>();
        probed.passTemporaries.coefficients = entry.at("pass_temporaries").get<std::array<double, 4>>();
        probed.stepTemporaries = entry.at("step_temporaries").get<int64_t>();
    } catch (const nlohmann::json::exception &) {
        return std::nullopt; // not probed in this setting, or a damaged entry: probed again
    }
    if (probed.probes.empty())
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
    const std::string fit = "fitted to " + std::to_string(probed.probes.size()) + " probes of the module";
    e.roles.push_back({MemoryRole::SavedActivations, "mixed", 0, probed.savedActivations.at(B, T), fit});
    // The step's token tensors (int64 inputs and targets): the probes held one microbatch's, a step
    // of accumulation holds them all.
    e.roles.push_back({MemoryRole::Temporaries, "mixed", 0,
                       probed.temporariesAt(B, T) + (config.train.accumulation - 1) * 2 * B * T * 8, fit});
    e.activationsPredicted = true;
    e.peakBytes = 0;
    for (const auto &r : e.roles)
        e.peakBytes += r.bytes;
    int64_t largestContext = 0;
    for (const auto &p : probed.probes)
        largestContext = std::max(largestContext, p.context);
    e.source = "probes of the TorchScript module (sha256 " + probed.sha256.substr(0, 16) + ", "
               + std::to_string(probed.probes.size()) + " short runs at microbatch 1 and 2, contexts up to "
               + std::to_string(largestContext) + (probed.fromCache ? "; cached" : "") + ")";
    if (!probed.temporariesGrewWithMicrobatch())
        e.source += "; its temporaries did not grow from microbatch 1 to 2, so a larger shape's are a floor";
    return e;
}

} // namespace optlog
