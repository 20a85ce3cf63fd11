// SPDX-License-Identifier: MIT
#include "core/config/studyplan.h"

#include "core/config/configfields.h"
#include "core/config/presets.h"

#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace optlog {

RunConfig PlannedRun::config() const
{
    std::vector<std::string> all = overrides;
    all.push_back(fieldAssignment(*findConfigField("name"), name));
    if (!from.empty())
        return loadDerivedConfig(fromToml, "run " + from, all);
    return loadRunConfig(preset, configFile, all);
}

std::vector<PlannedRun> replicatesOf(const PlannedRun &run)
{
    const RunConfig config = run.config(); // its own rules first
    if (run.repeats < 1 || run.repeats > PlannedRun::kMaxRepeats)
        throw ConfigError("repeats", "repeats = " + std::to_string(run.repeats) + " for " + run.name
                                         + ": must be from 1 to " + std::to_string(PlannedRun::kMaxRepeats));
    std::vector<int64_t> seeds = run.seeds;
    if (!seeds.empty() && run.repeats > 1 && int64_t(seeds.size()) != run.repeats)
        throw ConfigError("seeds", "seeds for " + run.name + ": " + std::to_string(seeds.size())
                                       + " seeds, but repeats = " + std::to_string(run.repeats)
                                       + "; give one or the other, or as many seeds as repeats");
    if (seeds.empty()) {
        if (run.repeats == 1)
            return {run};
        const int64_t first = config.train.seed;
        for (int64_t i = 0; i < run.repeats; ++i)
            seeds.push_back(first + i);
    }
    for (size_t i = 0; i < seeds.size(); ++i) {
        if (seeds[i] < 0)
            throw ConfigError("seeds", "seeds for " + run.name + ": " + std::to_string(seeds[i])
                                           + " is negative; train.seed is at least 0");
        if (std::count(seeds.begin(), seeds.end(), seeds[i]) > 1)
            throw ConfigError("seeds", "seeds for " + run.name + ": " + std::to_string(seeds[i])
                                           + " appears twice; replicates need different seeds");
    }
    std::vector<PlannedRun> replicates;
    for (int64_t seed : seeds) {
        PlannedRun replicate = run;
        replicate.name = run.name + " seed " + std::to_string(seed);
        replicate.repeats = 1;
        replicate.seeds.clear();
        replicate.overrides.push_back("train.seed=" + std::to_string(seed));
        replicate.overrides.push_back(fieldAssignment(*findConfigField("group"), run.name));
        replicates.push_back(std::move(replicate));
    }
    return replicates;
}

std::vector<std::string> runArguments(const PlannedRun &run, const std::string &study)
{
    if (!run.resume.empty())
        return {"run", "--resume", study, run.resume};
    std::vector<std::string> arguments = {"run", "--db", study};
    if (!run.from.empty())
        arguments.insert(arguments.end(), {"--from", run.from});
    else if (!run.preset.empty())
        arguments.insert(arguments.end(), {"--preset", run.preset});
    if (!run.configFile.empty())
        arguments.insert(arguments.end(), {"--config", run.configFile});
    for (const auto &o : run.overrides)
        arguments.insert(arguments.end(), {"--set", o});
    arguments.insert(arguments.end(), {"--set", fieldAssignment(*findConfigField("name"), run.name)});
    return arguments;
}

namespace {

// `run` as a preset and overrides alone: its own when it has them, else every field its config
// sets apart from the default preset's (its name is the [[run]]'s own).
PlannedRun standingAlone(const PlannedRun &run)
{
    if (run.from.empty() && run.configFile.empty())
        return run;
    PlannedRun alone = run;
    alone.from.clear();
    alone.fromToml.clear();
    alone.configFile.clear();
    alone.preset = "default";
    alone.overrides.clear();
    const RunConfig config = run.config();
    alone.overrides = overridesFrom(loadRunConfig(alone.preset, "", {}),
                                    [&config](const ConfigField &field) -> std::optional<std::string> {
                                        if (field.path() == "name")
                                            return std::nullopt; // the [[run]]'s own
                                        return fieldText(field, config);
                                    });
    return alone;
}

} // namespace

std::string studyPlanToml(const StudyPlan &plan)
{
    toml::table root{{"name", plan.name}, {"baseline", plan.baseline}, {"tolerance", plan.tolerance}};
    toml::array runs;
    for (const PlannedRun &planned : plan.runs) {
        const PlannedRun run = standingAlone(planned);
        toml::array overrides;
        for (const std::string &o : run.overrides)
            overrides.push_back(o);
        toml::table entry{{"name", run.name}, {"preset", run.preset}, {"overrides", overrides}};
        if (!run.baseline.empty())
            entry.insert("baseline", run.baseline);
        if (run.repeats != 1)
            entry.insert("repeats", run.repeats);
        if (!run.seeds.empty()) {
            toml::array seeds;
            for (int64_t seed : run.seeds)
                seeds.push_back(seed);
            entry.insert("seeds", seeds);
        }
        runs.push_back(entry);
    }
    root.insert("run", runs);
    std::ostringstream out;
    out << root << "\n";
    return out.str();
}

namespace {

// The study's TOML: the file at `source`, or else the named study's own text.
std::string studySourceText(const std::string &source)
{
    if (std::filesystem::exists(source)) {
        std::ifstream in(source);
        std::stringstream buffer;
        buffer << in.rdbuf();
        return buffer.str();
    }
    return studyText(source);
}

toml::table parseStudyToml(const std::string &text, const std::string &source)
{
    try {
        return toml::parse(text, source);
    } catch (const toml::parse_error &e) {
        throw ConfigError("study (" + source + "): not valid TOML: " + std::string(e.description()));
    }
}

// The study's own keys (name, baseline, tolerance), checked; its runs are read apart.
StudyPlan studyHeader(const toml::table &table, const std::string &source)
{
    StudyPlan plan;
    plan.name = table["name"].value_or(std::string("study"));
    plan.baseline = table["baseline"].value_or(std::string());
    plan.tolerance = table["tolerance"].value_or(0.02);
    if (!std::isfinite(plan.tolerance) || plan.tolerance < 0)
        throw ConfigError("tolerance", "study (" + source + "): tolerance = " + std::to_string(plan.tolerance)
                                           + ": must be a finite number of nats per token, 0 or more (such as 0.02)");
    for (const auto &[key, node] : table) {
        const std::string k(key.str());
        if (k != "name" && k != "baseline" && k != "tolerance" && k != "run")
            throw ConfigError("study (" + source + "): unknown key '" + k
                              + "'; known: name, baseline, tolerance, [[run]]");
    }
    return plan;
}

// One [[run]] entry, its keys checked and its config and seeds validated.
PlannedRun plannedRunFrom(const toml::node &node, const std::string &source)
{
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
        if (k != "name" && k != "preset" && k != "overrides" && k != "baseline" && k != "repeats" && k != "seeds")
            throw ConfigError("study (" + source + "): [[run]] " + run.name + ": unknown key '" + k
                              + "'; known: name, preset, overrides, baseline, repeats, seeds");
    }
    if (const toml::array *overrides = (*entry)["overrides"].as_array())
        for (const auto &o : *overrides)
            run.overrides.push_back(o.value_or(std::string()));
    const std::string where = "study (" + source + "): [[run]] " + run.name + ": ";
    if (const toml::node *repeats = entry->get("repeats")) {
        const auto count = repeats->value_exact<int64_t>();
        if (!count)
            throw ConfigError("repeats", where + "repeats must be an integer from 1 to "
                                             + std::to_string(PlannedRun::kMaxRepeats));
        run.repeats = *count;
    }
    if (const toml::node *seeds = entry->get("seeds")) {
        const toml::array *list = seeds->as_array();
        for (size_t i = 0; list && i < list->size(); ++i)
            if (const auto seed = list->get(i)->value_exact<int64_t>())
                run.seeds.push_back(*seed);
        if (!list || run.seeds.size() != list->size())
            throw ConfigError("seeds", where + "seeds must be a list of integers, such as [1, 2, 3]");
    }
    try {
        replicatesOf(run); // validates the config and the seeds now, before any run starts
    } catch (const NotApplicable &) {
        // Kept: the study skips a run its model cannot take, and says why (app/studycommand.cpp).
    } catch (const ConfigError &e) {
        throw ConfigError(e.field(), where + e.what());
    }
    return run;
}

// Every baseline named, the study's and each run's, must be a run of the study.
void checkBaselinesAreRuns(const StudyPlan &plan, const std::string &source)
{
    const auto known = [&plan](const std::string &name) {
        return std::any_of(plan.runs.begin(), plan.runs.end(), [&name](const PlannedRun &r) { return r.name == name; });
    };
    for (const auto &run : plan.runs)
        if (!run.baseline.empty() && !known(run.baseline))
            throw ConfigError("study (" + source + "): [[run]] " + run.name + ": baseline '" + run.baseline
                              + "' is not a run of this study");
    if (!known(plan.baseline))
        throw ConfigError("study (" + source + "): baseline '" + plan.baseline + "' is not a run of this study");
}

} // namespace

StudyPlan loadStudyPlan(const std::string &source)
{
    const toml::table table = parseStudyToml(studySourceText(source), source);
    StudyPlan plan = studyHeader(table, source);
    const toml::array *runs = table["run"].as_array();
    if (!runs || runs->empty())
        throw ConfigError("study (" + source + "): no [[run]] entries; each needs name and preset");
    for (const auto &node : *runs)
        plan.runs.push_back(plannedRunFrom(node, source));
    if (plan.baseline.empty())
        plan.baseline = plan.runs.front().name;
    checkBaselinesAreRuns(plan, source);
    return plan;
}

} // namespace optlog
