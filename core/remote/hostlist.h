// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace optlog {

// A host the user has named and `optlog host check` reached: its SSH destination and the optlog
// command there. Kept in $XDG_CONFIG_HOME/optlog/hosts.json (~/.config/optlog/hosts.json), so
// that `optlog run --host NAME` and the workbench's "Run on" list know it again.
struct HostEntry
{
    std::string name;              // the SSH destination
    std::string optlog = "optlog"; // the command there: on its PATH, or a path
};

// Throws InputError for a name that ssh would read as an option or that is not one word of plain
// text, naming what a destination is.
void requireDestination(const std::string &name);

std::vector<HostEntry> rememberedHosts(); // by name
// The entry for `name`, else none.
std::optional<HostEntry> rememberedHost(const std::string &name);
void rememberHost(const HostEntry &host);

} // namespace optlog
