// SPDX-License-Identifier: MIT
#include "core/config/config.h"

#include "core/config/config_p.h"
#include "core/config/configfields.h"
#include "core/config/presets.h"
#include "core/contract/format.h"

#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <type_traits>

namespace optlog {

namespace {

std::string describe(const toml::node &node)
{
    std::ostringstream out;
    if (node.is_string())
        out << '"' << node.value<std::string>().value_or("") << '"';
    else if (node.is_table())
        out << "a table";
    else if (node.is_array())
        out << "an array";
    else
        node.visit([&out](const auto &value) { out << value; });
    return out.str();
}

void checkRange(const ConfigField &field, double value, const std::string &shown)
{
    const bool tooHigh = field.maximum != 0
                         && (field.exclusiveMaximum ? value >= field.maximum : value > field.maximum);
    if (value < field.minimum || tooHigh || std::isnan(value))
        throw ConfigError(field.path(), "config: " + field.path() + " = " + shown + ": must be " + rangeText(field)
                                            + " (" + field.help + ")");
}

void assign(const ConfigField &field, RunConfig &config, const toml::node &node)
{
    const std::string shown = describe(node);
    std::visit(
        [&](auto target) {
            using T = std::remove_pointer_t<decltype(target)>;
            if constexpr (std::is_same_v<T, int64_t>) {
                auto v = node.value_exact<int64_t>();
                if (!v)
                    throw ConfigError(field.path(), "config: " + field.path() + " = " + shown + ": expected an integer");
                checkRange(field, double(*v), shown);
                *target = *v;
            } else if constexpr (std::is_same_v<T, double>) {
                if (!node.is_number())
                    throw ConfigError(field.path(), "config: " + field.path() + " = " + shown + ": expected a number");
                double v = *node.value<double>();
                checkRange(field, v, shown);
                *target = v;
            } else if constexpr (std::is_same_v<T, bool>) {
                auto v = node.value_exact<bool>();
                if (!v)
                    throw ConfigError(field.path(),
                                      "config: " + field.path() + " = " + shown + ": expected true or false");
                *target = *v;
            } else {
                auto v = node.value_exact<std::string>();
                if (!v)
                    throw ConfigError(field.path(), "config: " + field.path() + " = " + shown + ": expected a string");
                if (!field.choices.empty()
                    && std::find(field.choices.begin(), field.choices.end(), *v) == field.choices.end())
                    throw ConfigError(field.path(), "config: " + field.path() + " = " + shown + ": must be one of "
                                                        + joined(field.choices));
                if constexpr (std::is_same_v<T, ChoiceRef>)
                    target.set(*v);
                else
                    *target = *v;
            }
        },
        field.ref(config));
}

const ConfigField *findField(const std::string &section, const std::string &key)
{
    for (const auto &field : configFields())
        if (field.section == section && field.key == key)
            return &field;
    return nullptr;
}

std::vector<std::string> keysOf(const std::string &section)
{
    std::vector<std::string> keys;
    for (const auto &field : configFields())
        if (field.section == section)
            keys.push_back(field.key);
    return keys;
}

void applyTable(RunConfig &config, const toml::table &table, const std::string &origin)
{
    for (const auto &[rawKey, node] : table) {
        const std::string key(rawKey.str());
        if (const ConfigField *field = findField("", key)) {
            assign(*field, config, node);
            continue;
        }
        const std::vector<std::string> sections = configSections();
        if (std::find(sections.begin(), sections.end(), key) == sections.end()) {
            std::vector<std::string> allowed = keysOf("");
            for (const auto &s : sections)
                allowed.push_back("[" + s + "]");
            throw ConfigError("config (" + origin + "): unknown key '" + key + "'; known: " + joined(allowed));
        }
        const toml::table *inner = node.as_table();
        if (!inner)
            throw ConfigError("config (" + origin + "): '" + key + "' must be a table [" + key + "], got "
                              + describe(node));
        for (const auto &[rawInnerKey, innerNode] : *inner) {
            const std::string innerKey(rawInnerKey.str());
            const ConfigField *field = findField(key, innerKey);
            if (!field)
                throw ConfigError("config (" + origin + "): unknown key '" + key + "." + innerKey + "'; known keys in ["
                                  + key + "]: " + joined(keysOf(key)));
            assign(*field, config, innerNode);
        }
    }
}

} // namespace

// As short as it reads exactly: whole numbers in full (1048576, not 1.04858e+06), others as
// printf's %g does (0.001, 1e-12).
std::string formatNumber(double v)
{
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15)
        return std::to_string(static_cast<long long>(v));
    std::ostringstream out;
    out << v;
    return out.str();
}

std::string joined(const std::vector<std::string> &items)
{
    std::string out;
    for (const auto &item : items)
        out += (out.empty() ? "" : ", ") + item;
    return out;
}

void applyTomlText(RunConfig &config, const std::string &text, const std::string &origin)
{
    toml::table table;
    try {
        table = toml::parse(text, origin);
    } catch (const toml::parse_error &e) {
        std::ostringstream out;
        out << "config (" << origin << "): not valid TOML at line " << e.source().begin.line << ", column "
            << e.source().begin.column << ": " << e.description();
        throw ConfigError(out.str());
    }
    applyTable(config, table, origin);
}

void applyTomlFile(RunConfig &config, const std::string &path)
{
    std::error_code error;
    if (std::filesystem::is_directory(path, error))
        throw ConfigError("config: '" + path + "' is a directory; give a TOML config file");
    std::ifstream in(path);
    if (!in)
        throw ConfigError("config: cannot read '" + path + "': no such file or not readable");
    std::stringstream text;
    text << in.rdbuf();
    applyTomlText(config, text.str(), path);
}

void applyOverride(RunConfig &config, const std::string &assignment)
{
    const auto eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0)
        throw ConfigError("--set '" + assignment + "': expected key=value, for example train.steps=100");
    const std::string key = assignment.substr(0, eq);
    const std::string value = assignment.substr(eq + 1);
    const auto dot = key.find('.');
    const std::string section = dot == std::string::npos ? "" : key.substr(0, dot);
    const std::string name = dot == std::string::npos ? key : key.substr(dot + 1);
    const ConfigField *field = findField(section, name);
    if (!field) {
        std::vector<std::string> known;
        for (const auto &f : configFields())
            known.push_back(f.path());
        throw ConfigError("--set " + key + ": unknown key; known: " + joined(known));
    }
    // Read the value as TOML so that numbers and booleans keep their type; a bare word is a string.
    toml::table parsed;
    try {
        parsed = toml::parse("v = " + value);
    } catch (const toml::parse_error &) {
        parsed = toml::table{{"v", value}};
    }
    assign(*field, config, *parsed.get("v"));
}

std::string toToml(const RunConfig &config)
{
    RunConfig copy = config; // ConfigField::ref takes a mutable config
    std::map<std::string, toml::table> bySection;
    toml::table root;
    for (const auto &field : configFields()) {
        toml::table &target = field.section.empty() ? root : bySection[field.section];
        std::visit(
            [&](const auto &value) {
                if constexpr (std::is_same_v<std::decay_t<decltype(value)>, ChoiceRef>)
                    target.insert_or_assign(field.key, value.name());
                else
                    target.insert_or_assign(field.key, *value);
            },
            field.ref(copy));
    }
    std::ostringstream out;
    out << root << "\n";
    for (const auto &section : configSections())
        out << "\n[" << section << "]\n" << bySection[section] << "\n";
    return out.str();
}

RunConfig loadRunConfig(const std::string &preset, const std::string &file, const std::vector<std::string> &overrides)
{
    RunConfig config;
    if (!preset.empty())
        applyTomlText(config, presetText(preset), "preset " + preset);
    if (!file.empty())
        applyTomlFile(config, file);
    for (const auto &assignment : overrides)
        applyOverride(config, assignment);
    if (config.name.empty())
        config.name = preset.empty() ? "run" : preset;
    validate(config);
    return config;
}

RunConfig loadDerivedConfig(const std::string &storedToml, const std::string &origin,
                            const std::vector<std::string> &overrides)
{
    RunConfig config;
    applyTomlText(config, storedToml, origin);
    config.group.clear(); // not another replicate of the stored run's group
    for (const auto &assignment : overrides)
        applyOverride(config, assignment);
    validate(config);
    return config;
}

} // namespace optlog
