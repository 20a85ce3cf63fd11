// SPDX-License-Identifier: MIT
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace optlog {

// optlog(1) in roff, written from the CLI's own definitions (each command, option, positional,
// type and default as the parser knows them), so the manual cannot drift from the program.
// `date` is the manual's date ("2026-11-30").
std::string manPage(const CLI::App &app, const std::string &version, const std::string &date);

} // namespace optlog
