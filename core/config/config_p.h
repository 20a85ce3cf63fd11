// SPDX-License-Identifier: MIT
#pragma once
// The config floor's own text helpers, shared by config.cpp, configfields.cpp and validation.cpp.

#include <string>
#include <vector>

namespace optlog {

// As short as it reads exactly: whole numbers in full (1048576, not 1.04858e+06), others as
// printf's %g does (0.001, 1e-12).
std::string formatNumber(double v);
// "a, b, c"
std::string joined(const std::vector<std::string> &items);
struct ConfigField;
// "at least 0", "from 1 to 65536", "from 0 to below 1": a number field's range in words.
std::string rangeText(const ConfigField &field);

} // namespace optlog
