// SPDX-License-Identifier: MIT
#include "core/remote/hostlist.h"

#include "core/config/cachefile.h"
#include "core/contract/format.h"
#include "core/contract/inputerror.h"

#include <cstdlib>
#include <filesystem>

namespace optlog {

namespace {

std::string hostListFile()
{
    const char *xdg = std::getenv("XDG_CONFIG_HOME");
    const char *home = std::getenv("HOME");
    const std::string folder = (xdg && *xdg ? std::string(xdg) : std::string(home && *home ? home : "/tmp") + "/.config")
                               + "/optlog";
    std::error_code ignored; // when it cannot be made, the write below says why
    std::filesystem::create_directories(folder, ignored);
    return folder + "/hosts.json";
}

} // namespace

void requireDestination(const std::string &name)
{
    const std::string what = "a host is an SSH destination, as `ssh` takes it: an alias from ~/.ssh/config, "
                             "user@host or host";
    if (name.empty())
        throw InputError("no host named: " + what);
    if (name.front() == '-')
        throw InputError("host \"" + printable(name) + "\" begins with '-', which ssh would read as an option: " + what);
    if (name.find_first_of(" \t\r\n'\"\\;&|$`<>()") != std::string::npos || !unprintableCharacter(name).empty())
        throw InputError("host \"" + printable(name) + "\" is not one word: " + what);
}

std::vector<HostEntry> rememberedHosts()
{
    std::vector<HostEntry> hosts;
    const nlohmann::json list = readJsonCache(hostListFile());
    for (const auto &[name, entry] : list.items())
        if (entry.is_object())
            hosts.push_back({name, entry.value("optlog", std::string("optlog"))});
    return hosts;
}

std::optional<HostEntry> rememberedHost(const std::string &name)
{
    for (const HostEntry &host : rememberedHosts())
        if (host.name == name)
            return host;
    return std::nullopt;
}

void rememberHost(const HostEntry &host)
{
    updateJsonCache(hostListFile(), [&](nlohmann::json &list) { list[host.name] = {{"optlog", host.optlog}}; });
}

} // namespace optlog
