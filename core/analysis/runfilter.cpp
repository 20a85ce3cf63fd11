// SPDX-License-Identifier: MIT
#include "core/analysis/runfilter.h"

#include "core/analysis/runsummary.h"
#include "core/config/configerror.h"
#include "core/config/configfields.h"
#include "core/contract/rowlookup.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>
#include <set>

namespace optlog {

namespace {

std::string lower(std::string text)
{
    for (char &c : text)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    return text;
}

bool contains(const std::string &text, const std::string &lowerPart)
{
    return lower(text).find(lowerPart) != std::string::npos;
}

// The words of a filter: split at spaces, "quoted text" kept whole (its quotes dropped).
std::vector<std::string> words(const std::string &text)
{
    std::vector<std::string> out;
    std::string word;
    bool quoted = false, started = false;
    for (const char c : text) {
        if (c == '"') {
            quoted = !quoted;
            started = true;
        } else if (c == ' ' && !quoted) {
            if (started)
                out.push_back(word);
            word.clear();
            started = false;
        } else {
            word += c;
            started = true;
        }
    }
    if (quoted)
        throw ConfigError("filter", "filter: a quote is not closed in '" + text
                                        + "'; write \"two words\" with a "
                                          "quote at each end");
    if (started)
        out.push_back(word);
    return out;
}

std::optional<double> number(const std::string &text)
{
    char *end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0')
        return std::nullopt;
    return value;
}

// The config fields a filter key names: its full path, or every field whose path ends in it.
std::vector<std::string> fieldsNamed(const std::string &key)
{
    std::vector<std::string> out;
    for (const ConfigField &field : configFields()) {
        const std::string path = field.path();
        const size_t dot = path.rfind('.');
        if (path == key || (dot != std::string::npos && path.substr(dot + 1) == key))
            out.push_back(path);
    }
    return out;
}

// The recorded runs' keys a filter key names: the key itself, or every key whose last part it is.
std::vector<std::string> recordedKeysNamed(const std::string &key, const std::vector<std::string> &recordedKeys)
{
    std::vector<std::string> out;
    for (const std::string &candidate : recordedKeys) {
        const std::string path = lower(candidate);
        const size_t dot = path.rfind('.');
        if (path == key || (dot != std::string::npos && path.substr(dot + 1) == key))
            out.push_back(path);
    }
    return out;
}

// The keys that name a run's own facts; any other key names a config field or a recorded key.
constexpr Named<RunFilter::Term::Kind> kRunKeys[] = {{RunFilter::Term::Kind::Tag, "tag"},
                                                     {RunFilter::Term::Kind::Name, "name"},
                                                     {RunFilter::Term::Kind::Note, "note"},
                                                     {RunFilter::Term::Kind::Group, "group"},
                                                     {RunFilter::Term::Kind::Outcome, "outcome"}};

std::string keysText()
{
    std::string keys;
    for (const auto &key : kRunKeys)
        keys += std::string(key.name) + ", ";
    return keys
           + "is:archived, or a config field such as precision.mode (or mode) and train.steps (or steps), or a "
             "key of a recorded run's config";
}

} // namespace

RunFilter RunFilter::parse(const std::string &text, const std::vector<std::string> &recordedKeys)
{
    RunFilter filter;
    for (std::string word : words(text)) {
        Term term;
        if (word.size() > 1 && word.front() == '-') {
            term.negated = true;
            word.erase(0, 1);
        }
        const size_t colon = word.find(':');
        if (colon == std::string::npos || colon == 0) {
            term.value = lower(word);
            filter.m_terms.push_back(term);
            continue;
        }
        const std::string key = lower(word.substr(0, colon));
        term.value = lower(word.substr(colon + 1));
        if (key == "is") {
            if (term.value != "archived")
                throw ConfigError("filter", "filter: '" + word + "': the only is: word is is:archived");
            term.kind = Term::Kind::Archived;
            filter.m_namesArchived = true;
            filter.m_terms.push_back(term);
            continue;
        }
        if (const auto kind = valueNamed(kRunKeys, key)) {
            term.kind = *kind;
            if (term.kind == Term::Kind::Outcome && term.value != outcomeName(std::nullopt) && !outcomeNamed(term.value))
                throw ConfigError("filter",
                                  "filter: '" + word + "': no such outcome; the outcomes are " + outcomeNamesText());
        } else {
            term.kind = Term::Kind::Field;
            term.fields = fieldsNamed(key);
            term.recordedKeys = recordedKeysNamed(key, recordedKeys);
            if (term.fields.empty() && term.recordedKeys.empty())
                throw ConfigError("filter", "filter: '" + word + "': '" + key
                                                + "' is not a key a filter knows; the keys are " + keysText());
        }
        filter.m_terms.push_back(term);
    }
    return filter;
}

bool RunFilter::matchesTerm(const Term &term, const RunRecord &run, const RunConfig *config,
                            const std::vector<ConfigEntry> *recorded)
{
    const std::string &value = term.value;
    const auto anyOf = [](const std::vector<std::string> &texts, auto test) {
        return std::any_of(texts.begin(), texts.end(), test);
    };
    const auto valueMatches = [&](const std::string &text) {
        const auto wanted = number(value), actual = number(text);
        return wanted && actual ? *wanted == *actual : contains(text, value);
    };
    const auto fieldMatches = [&](const std::string &path) {
        return valueMatches(fieldText(*findConfigField(path), *config));
    };
    const auto recordedMatches = [&] {
        return recorded && std::any_of(recorded->begin(), recorded->end(), [&](const ConfigEntry &entry) {
                   const bool named = std::find(term.recordedKeys.begin(), term.recordedKeys.end(), lower(entry.key))
                                      != term.recordedKeys.end();
                   return named && valueMatches(entry.value);
               });
    };
    using Kind = Term::Kind;
    switch (term.kind) {
    case Kind::Tag: return anyOf(run.tags, [&](const std::string &tag) { return lower(tag) == value; });
    case Kind::Name:
        return contains(run.name, value)
               || anyOf(run.formerNames, [&](const std::string &name) { return contains(name, value); });
    case Kind::Note: return contains(run.note, value);
    case Kind::Group: return lower(run.group) == value;
    case Kind::Outcome: return outcomeName(run.outcome) == value;
    case Kind::Archived: return run.archived;
    case Kind::Field: return config ? anyOf(term.fields, fieldMatches) : recordedMatches();
    case Kind::Anywhere: break;
    }
    if (contains(run.name, value) || contains(run.note, value) || contains(run.group, value)
        || anyOf(run.formerNames, [&](const std::string &name) { return contains(name, value); })
        || anyOf(run.tags, [&](const std::string &tag) { return contains(tag, value); }))
        return true;
    if (recorded)
        return std::any_of(recorded->begin(), recorded->end(),
                           [&](const ConfigEntry &entry) { return contains(entry.value, value); });
    if (!config)
        return false;
    const auto &fields = configFields();
    return std::any_of(fields.begin(), fields.end(),
                       [&](const ConfigField &field) { return contains(fieldText(field, *config), value); });
}

bool RunFilter::matches(const RunRecord &run, const RunConfig *config) const
{
    if (run.archived && !m_showArchived && !m_namesArchived)
        return false;
    // Only bare words and config fields read the config: a list without them parses no TOML.
    const bool readsConfig = std::any_of(m_terms.begin(), m_terms.end(), [](const Term &term) {
        return term.kind == Term::Kind::Anywhere || term.kind == Term::Kind::Field;
    });
    std::optional<RunConfig> parsed;
    std::optional<std::vector<ConfigEntry>> recorded;
    if (!config && readsConfig) {
        const std::string label = "run " + std::to_string(run.id);
        try {
            if (!recorderOf(run).empty()) { // its trainer's keys, whatever they are named
                recorded = flattenConfigToml(run.configToml, label);
            } else {
                RunConfig read;
                applyTomlText(read, run.configToml, label);
                parsed = read;
                config = &*parsed;
            }
        } catch (const std::exception &) {
            // A config this optlog cannot read matches on everything but its fields.
        }
    }
    const std::vector<ConfigEntry> *entries = recorded ? &*recorded : nullptr;
    return std::all_of(m_terms.begin(), m_terms.end(),
                       [&](const Term &term) { return matchesTerm(term, run, config, entries) != term.negated; });
}

std::vector<std::string> recordedConfigKeys(const std::vector<RunRecord> &runs)
{
    std::set<std::string> keys;
    for (const RunRecord &run : runs) {
        if (recorderOf(run).empty())
            continue;
        try {
            for (const ConfigEntry &entry : flattenConfigToml(run.configToml, "run " + std::to_string(run.id)))
                keys.insert(entry.key);
        } catch (const std::exception &) {
        }
    }
    return {keys.begin(), keys.end()};
}

} // namespace optlog
