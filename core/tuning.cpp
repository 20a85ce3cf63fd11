// SPDX-License-Identifier: MIT
#include "core/tuning.h"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <unistd.h>

namespace optlog {

namespace {

nlohmann::json readJson(const std::string &path)
{
    std::ifstream in(path);
    if (!in)
        return nlohmann::json::object();
    try {
        nlohmann::json value = nlohmann::json::parse(in);
        return value.is_object() ? value : nlohmann::json::object();
    } catch (const nlohmann::json::exception &) {
        return nlohmann::json::object(); // damaged: as if never tuned
    }
}

} // namespace

std::string precisionFamily(const std::string &precisionMode)
{
    if (precisionMode == "fp32")
        return "fp32";
    return precisionMode.find("fp16") != std::string::npos ? "fp16" : "bf16";
}

std::string tuningCacheFile()
{
    const char *xdg = std::getenv("XDG_CACHE_HOME");
    const char *home = std::getenv("HOME");
    const std::string base = xdg && *xdg ? xdg : std::string(home && *home ? home : "/tmp") + "/.cache";
    return base + "/optlog/runtime-tuning.json";
}

std::optional<TunedSettings> readTuning(const std::string &cacheFile, const std::string &machineKey,
                                        const std::string &family)
{
    const nlohmann::json cache = readJson(cacheFile);
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
    nlohmann::json cache = readJson(cacheFile);
    cache[machineKey][family] = {{"threads", settings.threads},
                                 {"wait_policy", settings.waitPolicy},
                                 {"core_type", settings.coreType},
                                 {"tokens_per_second", settings.tokensPerSecond},
                                 {"untuned_tokens_per_second", settings.untunedTokensPerSecond}};
    std::error_code ignored;
    std::filesystem::create_directories(std::filesystem::path(cacheFile).parent_path(), ignored);
    const std::string temporary = cacheFile + ".tmp" + std::to_string(::getpid());
    std::ofstream(temporary) << cache.dump(2);
    std::filesystem::rename(temporary, cacheFile, ignored);
}

} // namespace optlog
