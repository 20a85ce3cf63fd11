// SPDX-License-Identifier: MIT
#include "core/config/tuning.h"

#include "core/config/cachefile.h"
#include "core/config/config.h"

namespace optlog {

std::string precisionFamily(const std::string &precisionMode)
{
    return shortDtypeName(precisionModeNamed(precisionMode).compute);
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
    if (settings.threads <= 0 || (settings.waitPolicy != "PASSIVE" && settings.waitPolicy != "ACTIVE"))
        return std::nullopt;
    return settings;
}

void writeTuning(const std::string &cacheFile, const std::string &machineKey, const std::string &family,
                 const TunedSettings &settings)
{
    nlohmann::json cache = readJsonCache(cacheFile);
    cache[machineKey][family] = {{"threads", settings.threads},
                                 {"wait_policy", settings.waitPolicy},
                                 {"core_type", settings.coreType},
                                 {"tokens_per_second", settings.tokensPerSecond},
                                 {"untuned_tokens_per_second", settings.untunedTokensPerSecond}};
    writeJsonCache(cacheFile, cache);
}

} // namespace optlog
