// SPDX-License-Identifier: MIT
#include "core/config/studyplan.h"

#include "core/config/presets.h"

#include <toml++/toml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace optlog {

RunConfig PlannedRun::config() const
{
    std::vector<std::string> all = overrides;
    all.push_back("name=\"" + name + "\"");
    return loadRunConfig(preset, "", all);
}

StudyPlan loadStudyPlan(const std::string &source)
{
    std::string text;
    if (std::filesystem::exists(source)) {
        std::ifstream in(source);
        std::stringstream buffer;
        buffer << in.rdbuf();
        text = buffer.str();
    } else {
        text = studyText(source);
    }

    toml::table table;
    try {
        table = toml::parse(text, source);
    } catch (const toml::parse_error &e) {
        throw ConfigError("study (" + source + "): not valid TOML: " + std::string(e.description()));
    }

    StudyPlan plan;
    plan.name = table["name"].value_or(std::string("study"));
    plan.baseline = table["baseline"].value_or(std::string());
    plan.tolerance = table["tolerance"].value_or(0.02);
    for (const auto &[key, node] : table) {
        const std::string k(key.str());
        if (k != "name" && k != "baseline" && k != "tolerance" && k != "run")
            throw ConfigError("study (" + source + "): unknown key '" + k
                              + "'; known: name, baseline, tolerance, [[run]]");
    }
    const toml::array *runs = table["run"].as_array();
    if (!runs || runs->empty())
        throw ConfigError("study (" + source + "): no [[run]] entries; each needs name and preset");
    for (const auto &node : *runs) {
        const toml::table *entry = node.as_table();
        if (!entry)
            throw ConfigError("study (" + source + "): each [[run]] must be a table");
        PlannedRun run;
        run.name = (*entry)["name"].value_or(std::string());
        run.preset = (*entry)["preset"].value_or(std::string("default"));
        run.baseline = (*entry)["baseline"].value_or(std::string());
        if (run.name.empty())
            throw ConfigError("study (" + source + "): a [[run]] has no name");
        for (const auto &[key, value] : *entry) {
            const std::string k(key.str());
            if (k != "name" && k != "preset" && k != "overrides" && k != "baseline")
                throw ConfigError("study (" + source + "): [[run]] " + run.name + ": unknown key '" + k
                                  + "'; known: name, preset, overrides, baseline");
        }
        if (const toml::array *overrides = (*entry)["overrides"].as_array())
            for (const auto &o : *overrides)
                run.overrides.push_back(o.value_or(std::string()));
        run.config(); // validates now, before any run starts
        plan.runs.push_back(run);
    }
    if (plan.baseline.empty())
        plan.baseline = plan.runs.front().name;
    const auto known = [&plan](const std::string &name) {
        return std::any_of(plan.runs.begin(), plan.runs.end(), [&name](const PlannedRun &r) { return r.name == name; });
    };
    for (const auto &run : plan.runs)
        if (!run.baseline.empty() && !known(run.baseline))
            throw ConfigError("study (" + source + "): [[run]] " + run.name + ": baseline '" + run.baseline
                              + "' is not a run of this study");
    if (!known(plan.baseline))
        throw ConfigError("study (" + source + "): baseline '" + plan.baseline + "' is not a run of this study");
    return plan;
}

} // namespace optlog
