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

// Throws InputError for an optlog command there that is not one program (on the host's PATH, or a
// path to it): one that ssh's shell would read as more than one word, or as an option.
void requireHostProgram(const std::string &optlog);
// The command line ssh runs on a host for `optlog ARGUMENTS...` there: `optlog` checked as one
// program, then every word quoted. Where the command is used, not where it was typed: a study
// from someone else carries its hosts' optlog commands.
std::string hostCommand(const std::string &optlog, const std::vector<std::string> &arguments);

std::vector<HostEntry> rememberedHosts(); // by name
// The entry for `name`, else none.
std::optional<HostEntry> rememberedHost(const std::string &name);
void rememberHost(const HostEntry &host);

} // namespace optlog
