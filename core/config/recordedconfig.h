// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"
#include "core/config/configfields.h"

#include <string>
#include <vector>

namespace optlog {

// The config of a run its own trainer wrote (`optlog record`): the trainer's keys, not the
// engine's fields. It is stored as TOML like an engine run's, so that copy, export and the study
// file treat both alike; readers take either back as dotted keys.

// One key of a stored config by its dotted path ("train.lr"), its value as TOML writes it.
struct ConfigEntry
{
    std::string key;
    std::string value;
};

// The TOML a recorded run's config is stored as, from the JSON object its trainer sent: nested
// objects become dotted keys, null values are left out (TOML has none). Throws ConfigError
// naming the key for text that is not a JSON object, a value that is neither a string, a number,
// a boolean nor an array of those, and a key that is both a value and the prefix of another.
std::string recordedConfigToml(const std::string &json);

// Every key of a stored config with its value, sorted by key. Throws ConfigError for text that
// is not TOML.
std::vector<ConfigEntry> flattenConfigToml(const std::string &toml, const std::string &origin);

// Stored configs side by side. When every one is an engine run's, its fields in their order
// (compareConfigs); else every dotted key any of them has, sorted, "-" where one lacks it.
std::vector<FieldComparison> compareStoredConfigs(const std::vector<std::string> &tomls);

} // namespace optlog
