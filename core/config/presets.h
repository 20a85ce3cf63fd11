// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <vector>

namespace optlog {

// Presets and studies ship inside the binary (resources/presets, resources/studies).
std::vector<std::string> presetNames();
// Throws ConfigError naming the known presets when `name` is not one of them.
std::string presetText(const std::string &name);

std::vector<std::string> studyNames();
std::string studyText(const std::string &name);

} // namespace optlog
