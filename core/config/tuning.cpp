// SPDX-License-Identifier: MIT
#include "core/config/tuning.h"

#include "core/config/cachefile.h"
#include "core/config/config.h"
#include "core/contract/quantiles.h"

#include <algorithm>

namespace optlog {

std::string precisionFamily(const std::string &precisionMode)
{
    return shortDtypeName(precisionModeNamed(precisionMode).compute);
}

std::string TuneCandidate::label() const
{
    return std::to_string(threads) + " thread" + (threads == 1 ? "" : "s") + ", " + waitPolicy
           + (coreType.empty() ? "" : ", " + coreType) + (productPath.empty() ? "" : ", " + productPath);
}

double TuneCandidate::median() const
{
    return medianOf(tokensPerSecond);
}

bool TuneCandidate::isUntunedDefault(int cores) const
{
    return threads == cores && waitPolicy == kUntunedWaitPolicy && coreType.empty() && productPath.empty();
}

std::vector<TuneCandidate> tuneCandidates(int cores, const std::vector<std::string> &coreTypes)
{
    std::vector<int> threadCounts = {cores};
    if (cores > 1)
        threadCounts.push_back(1);
    std::vector<TuneCandidate> candidates;
    for (int threads : threadCounts)
        for (const char *wait : {"PASSIVE", "ACTIVE"})
            for (const auto &core : coreTypes)
                candidates.push_back({threads, wait, core, "", {}});
    return candidates;
}

TunedSettings bestSettings(const std::vector<TuneCandidate> &candidates, int cores)
{
    TunedSettings settings;
    const TuneCandidate *best = nullptr;
    for (const auto &c : candidates) {
        if (!best || c.median() > best->median())
            best = &c;
        if (c.isUntunedDefault(cores))
            settings.untunedTokensPerSecond = c.median();
    }
    if (best) {
        settings.threads = best->threads;
        settings.waitPolicy = best->waitPolicy;
        settings.coreType = best->coreType;
        settings.tokensPerSecond = best->median();
    }
    return settings;
}

std::vector<TuneCandidate> pathCandidates(const TunedSettings &best, const std::vector<std::string> &paths)
{
    std::vector<TuneCandidate> candidates;
    for (const std::string &path : paths)
        candidates.push_back({best.threads, best.waitPolicy, best.coreType, path, {}});
    return candidates;
}

void choosePath(TunedSettings &settings, const std::vector<TuneCandidate> &candidates,
                const std::vector<std::string> &reached)
{
    settings.paths.clear();
    const TuneCandidate *best = nullptr;
    for (size_t i = 0; i < candidates.size(); ++i) {
        const TuneCandidate &c = candidates[i];
        settings.paths.push_back({c.productPath, i < reached.size() ? reached[i] : "", c.median()});
        if (!best || c.median() > best->median())
            best = &c;
    }
    if (best) // tokensPerSecond stays the first round's, beside the untuned default's in the same alternation
        settings.productPath = best->productPath;
}

std::string betterCoreType(const std::string &chosenCore, const std::string &cpuFlags)
{
    const bool generic = chosenCore == "Prescott" || chosenCore == "Core2" || chosenCore == "Katmai";
    if (!generic)
        return "";
    if (cpuFlags.find("avx512f") != std::string::npos && cpuFlags.find("avx512bw") != std::string::npos)
        return "SkylakeX";
    if (cpuFlags.find("avx2") != std::string::npos)
        return "Haswell";
    return "";
}

std::string tuningCacheFile()
{
    return cacheFilePath("runtime-tuning.json");
}

std::optional<TunedSettings> readTuning(const std::string &cacheFile, const std::string &machineKey,
                                        const std::string &family)
{
    const nlohmann::json cache = readJsonCache(cacheFile);
    if (!cache.contains(machineKey) || !cache[machineKey].contains(family))
        return std::nullopt;
    const nlohmann::json &entry = cache[machineKey][family];
    TunedSettings settings;
    settings.threads = entry.value("threads", 0);
    settings.waitPolicy = entry.value("wait_policy", std::string());
    settings.coreType = entry.value("core_type", std::string());
    settings.tokensPerSecond = entry.value("tokens_per_second", 0.0);
    settings.untunedTokensPerSecond = entry.value("untuned_tokens_per_second", 0.0);
    settings.measuredBy = entry.value("measured_by", std::string(kMeasuredByTune)); // as before it was recorded
    settings.productPath = entry.value("product_path", std::string()); // a tuning from before paths: the defaults
    for (const nlohmann::json &timing : entry.value("product_paths", nlohmann::json::array()))
        settings.paths.push_back({timing.value("path", std::string()), timing.value("reached", std::string()),
                                  timing.value("tokens_per_second", 0.0)});
    if (settings.threads <= 0 || (settings.waitPolicy != "PASSIVE" && settings.waitPolicy != "ACTIVE"))
        return std::nullopt;
    return settings;
}

void writeTuning(const std::string &cacheFile, const std::string &machineKey, const std::string &family,
                 const TunedSettings &settings)
{
    nlohmann::json entry = {{"threads", settings.threads},
                            {"wait_policy", settings.waitPolicy},
                            {"core_type", settings.coreType},
                            {"tokens_per_second", settings.tokensPerSecond},
                            {"untuned_tokens_per_second", settings.untunedTokensPerSecond},
                            {"measured_by", settings.measuredBy},
                            {"product_path", settings.productPath},
                            {"product_paths", nlohmann::json::array()}};
    for (const PathTiming &timing : settings.paths)
        entry["product_paths"].push_back(
            {{"path", timing.path}, {"reached", timing.reached}, {"tokens_per_second", timing.tokensPerSecond}});
    updateJsonCache(cacheFile, [&](nlohmann::json &cache) { cache[machineKey][family] = entry; });
}

} // namespace optlog
