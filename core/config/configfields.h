// SPDX-License-Identifier: MIT
// The config's field table: every key of the TOML with its section, type, help and what it
// allows. Reading, writing, comparing and documenting a config all walk it.
#pragma once

#include "core/config/config.h"

#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace optlog {

// One config field: where it lives in the TOML, what it holds, what is allowed.
// The table drives parsing, validation, serialisation and (later) the designer.
// A field that holds a choice (ModelSource, Corpus, Attention), read and written as its word.
class ChoiceRef
{
public:
    template<typename Choice>
    explicit ChoiceRef(Choice *value)
        : m_get([value] { return nameOf(*value); })
        , m_set([value](const std::string &name) {
            const std::optional<Choice> named = valueNamed(choiceTable(Choice{}), name);
            if (named)
                *value = *named;
            return named.has_value();
        })
    { }
    std::string name() const { return m_get(); }
    // False, and the field unchanged, when `name` is none of the choice's words.
    bool set(const std::string &name) { return m_set(name); }

private:
    std::function<std::string()> m_get;
    std::function<bool(const std::string &)> m_set;
};

struct ConfigField
{
    using Ref = std::variant<int64_t *, double *, bool *, std::string *, ChoiceRef>;
    std::string section; // "" for top-level keys
    std::string key;
    std::string help; // one line, with the unit
    std::function<Ref(RunConfig &)> ref;
    double minimum = 0; // numbers: inclusive lower bound
    double maximum = 0; // numbers: inclusive upper bound; 0 = none
    bool exclusiveMaximum = false;
    std::vector<std::string> choices; // strings and choices: allowed values; empty = any

    std::string path() const { return section.empty() ? key : section + "." + key; }
};

const std::vector<ConfigField> &configFields();
// The field at a dotted path ("train.seed", "group"); nullptr when there is none.
const ConfigField *findConfigField(const std::string &path);
// The TOML's sections in the table's order ("model", "data", ...): how files and forms group fields.
std::vector<std::string> configSections();

// A field's value as a person reads it: strings bare, numbers as short as they print exactly.
std::string fieldText(const ConfigField &field, const RunConfig &config);
// `key=value` that applyOverride reads back to the same value (strings quoted).
std::string fieldAssignment(const ConfigField &field, const std::string &text);

// The `key=value` overrides (fieldAssignment's) that turn `base` into a config whose fields read
// `textOf(field)`: a run written as what it changes, as the CLI's --set and a plan's overrides
// say it. A field `textOf` gives nothing for is left as it is.
std::vector<std::string> overridesFrom(const RunConfig &base,
                                       const std::function<std::optional<std::string>(const ConfigField &)> &textOf);

// Every field as a Markdown table (key, default, what is allowed, meaning): docs/configs.md shows
// it, and tst_config keeps the page equal to it.
std::string configReferenceMarkdown();

// Every field of several configs side by side, and whether the runs disagree on it.
struct FieldComparison
{
    std::string path;
    std::vector<std::string> values; // one per config, in the order given
    bool differs = false;
};
std::vector<FieldComparison> compareConfigs(const std::vector<RunConfig> &configs);

} // namespace optlog
