// SPDX-License-Identifier: MIT
#include "core/config/recordedconfig.h"

#include "core/config/configerror.h"
#include "core/config/configfields.h"

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <sstream>

namespace optlog {

namespace {

// One JSON scalar as a TOML value; nothing for a value TOML cannot hold.
std::optional<toml::array> scalarInto(const nlohmann::json &value)
{
    toml::array holder;
    if (value.is_boolean())
        holder.push_back(value.get<bool>());
    else if (value.is_number_integer() && !(value.is_number_unsigned() && value.get<uint64_t>() > uint64_t(INT64_MAX)))
        holder.push_back(value.get<int64_t>());
    else if (value.is_number())
        holder.push_back(value.get<double>());
    else if (value.is_string())
        holder.push_back(value.get<std::string>());
    else
        return std::nullopt;
    return holder;
}

// The fewest digits that read back as the same double: 0.9, not 0.90000000000000002.
std::string shortestText(double value)
{
    char text[32];
    for (int digits = 1; digits <= 17; ++digits) {
        std::snprintf(text, sizeof text, "%.*g", digits, value);
        if (std::strtod(text, nullptr) == value)
            break;
    }
    return text;
}

const char *const kAllowed = "a string, a number, a boolean or an array of those";

void flattenJson(const nlohmann::json &object, const std::string &prefix, std::map<std::string, toml::array> &out)
{
    for (const auto &[name, value] : object.items()) {
        const std::string key = prefix.empty() ? name : prefix + "." + name;
        if (name.empty())
            throw ConfigError(key, "config: an empty key under '" + prefix + "'; give every key a name");
        if (value.is_null())
            continue; // TOML has no null: an unset option is left out
        if (value.is_object()) {
            flattenJson(value, key, out);
            continue;
        }
        toml::array held;
        if (value.is_array()) {
            toml::array items;
            for (const auto &item : value) {
                const std::optional<toml::array> one = scalarInto(item);
                if (!one)
                    throw ConfigError(key, "config: '" + key + "' is an array holding " + item.type_name()
                                               + "; a value is " + kAllowed);
                items.push_back(*one->get(0));
            }
            held.push_back(std::move(items));
        } else if (const std::optional<toml::array> one = scalarInto(value)) {
            held = *one;
        } else {
            throw ConfigError(key, "config: '" + key + "' holds " + value.type_name() + "; a value is " + kAllowed);
        }
        out.emplace(key, std::move(held));
    }
}

// A key's parts as TOML reads them back; every part quoted, so that "a b" or "x/y" stay one part.
std::vector<std::string> keyParts(const std::string &key)
{
    std::vector<std::string> parts;
    std::string part;
    std::istringstream in(key);
    while (std::getline(in, part, '.'))
        parts.push_back(part);
    return parts;
}

// A value as a person types it into a filter: text unquoted, a number in its shortest exact form.
std::string valueText(const toml::node &node)
{
    if (const auto *text = node.as_string())
        return text->get();
    if (const auto *number = node.as_floating_point())
        return shortestText(number->get());
    if (const auto *array = node.as_array()) {
        std::string out = "[";
        for (const toml::node &item : *array)
            out += (out.size() > 1 ? ", " : "") + valueText(item);
        return out + "]";
    }
    std::ostringstream out; // an integer, a boolean, a date
    node.visit([&out](const auto &value) { out << value; });
    return out.str();
}

void flattenToml(const toml::table &table, const std::string &prefix, std::vector<ConfigEntry> &out)
{
    for (const auto &[name, node] : table) {
        const std::string key = prefix.empty() ? std::string(name.str()) : prefix + "." + std::string(name.str());
        if (const toml::table *inner = node.as_table()) {
            flattenToml(*inner, key, out);
            continue;
        }
        out.push_back({key, valueText(node)});
    }
}

} // namespace

std::string recordedConfigToml(const std::string &json)
{
    const nlohmann::json object = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
    if (!object.is_object())
        throw ConfigError("config: the recorded config is not a JSON object; send {\"key\": value, ...}");
    std::map<std::string, toml::array> flat;
    flattenJson(object, "", flat);
    for (const auto &[key, value] : flat)
        for (size_t dot = key.find('.'); dot != std::string::npos; dot = key.find('.', dot + 1))
            if (flat.count(key.substr(0, dot)))
                throw ConfigError(key.substr(0, dot), "config: '" + key.substr(0, dot)
                                                          + "' holds a value and is also the prefix of '" + key
                                                          + "'; rename one of them");
    toml::table root;
    for (auto &[key, held] : flat) {
        const std::vector<std::string> parts = keyParts(key);
        toml::table *table = &root;
        for (size_t i = 0; i + 1 < parts.size(); ++i) {
            auto [entry, inserted] = table->insert(parts[i], toml::table{});
            table = entry->second.as_table();
            if (!table) // a key with an empty part ("a..b") met a value of the same path
                throw ConfigError(key, "config: '" + key + "' cannot be stored beside another key of that path");
        }
        table->insert_or_assign(parts.back(), std::move(*held.get(0)));
    }
    std::ostringstream out;
    out << root;
    return out.str();
}

std::vector<ConfigEntry> flattenConfigToml(const std::string &toml, const std::string &origin)
{
    toml::table table;
    try {
        table = toml::parse(toml, origin);
    } catch (const toml::parse_error &e) {
        throw ConfigError(origin + ": the stored config is not TOML: " + std::string(e.description()));
    }
    std::vector<ConfigEntry> out;
    flattenToml(table, "", out);
    std::sort(out.begin(), out.end(), [](const ConfigEntry &a, const ConfigEntry &b) { return a.key < b.key; });
    return out;
}

std::vector<FieldComparison> compareStoredConfigs(const std::vector<std::string> &tomls)
{
    std::vector<RunConfig> engineConfigs;
    try {
        for (const auto &text : tomls) {
            RunConfig config;
            applyTomlText(config, text, "a stored run");
            engineConfigs.push_back(config);
        }
        return compareConfigs(engineConfigs);
    } catch (const ConfigError &) {
        // a recorded run's keys, or a config of another optlog version: compared key by key
    }
    std::vector<std::map<std::string, std::string>> flat;
    std::set<std::string> keys;
    for (const auto &text : tomls) {
        std::map<std::string, std::string> entries;
        try {
            for (auto &entry : flattenConfigToml(text, "a stored run")) {
                keys.insert(entry.key);
                entries.emplace(entry.key, entry.value);
            }
        } catch (const ConfigError &) {
            // not TOML: every key shows as missing
        }
        flat.push_back(std::move(entries));
    }
    std::vector<FieldComparison> out;
    for (const auto &key : keys) {
        FieldComparison field{key, {}, false};
        for (const auto &entries : flat) {
            const auto it = entries.find(key);
            field.values.push_back(it == entries.end() ? "-" : it->second);
        }
        field.differs = std::any_of(field.values.begin(), field.values.end(),
                                    [&field](const std::string &v) { return v != field.values.front(); });
        out.push_back(std::move(field));
    }
    return out;
}

} // namespace optlog
