// SPDX-License-Identifier: MIT
#include "core/config/presets.h"

#include "core/config/configerror.h"

#include <map>

namespace optlog {

namespace embedded {
extern const std::map<std::string, std::string> kPresetTexts;
extern const std::map<std::string, std::string> kStudyTexts;
} // namespace embedded

namespace {

std::vector<std::string> namesOf(const std::map<std::string, std::string> &texts)
{
    std::vector<std::string> names;
    for (const auto &entry : texts)
        names.push_back(entry.first);
    return names;
}

std::string lookup(const std::map<std::string, std::string> &texts, const std::string &name, const char *what)
{
    auto it = texts.find(name);
    if (it != texts.end())
        return it->second;
    std::string known;
    for (const auto &n : namesOf(texts))
        known += (known.empty() ? "" : ", ") + n;
    throw ConfigError(std::string("unknown ") + what + " '" + name + "'; known: " + known);
}

} // namespace

std::vector<std::string> presetNames() { return namesOf(embedded::kPresetTexts); }
std::string presetText(const std::string &name) { return lookup(embedded::kPresetTexts, name, "preset"); }
std::vector<std::string> studyNames() { return namesOf(embedded::kStudyTexts); }
std::string studyText(const std::string &name) { return lookup(embedded::kStudyTexts, name, "study"); }

} // namespace optlog
