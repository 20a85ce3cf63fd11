// SPDX-License-Identifier: MIT
#include "core/remote/hostlist.h"

#include "core/config/cachefile.h"
#include "core/contract/format.h"
#include "core/contract/inputerror.h"
#include "core/contract/program.h"
#include "core/remote/sshclient.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
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

void requireHostProgram(const std::string &optlog)
{
    const std::string what = "the optlog command on a host is one program: `optlog` on its PATH, or a path such "
                             "as /opt/venv/bin/optlog";
    if (optlog.empty())
        throw InputError("no optlog command named for the host: " + what);
    if (optlog.front() == '-')
        throw InputError("optlog command \"" + printable(optlog) + "\" begins with '-', an option: " + what);
    // A space is let through (a path may hold one, and the word is quoted); nothing else a shell reads.
    const bool shellWords = std::any_of(optlog.begin(), optlog.end(),
                                        [](char c) { return c != ' ' && std::strchr(kNotInOneWord, c) != nullptr; });
    if (shellWords || !unprintableCharacter(optlog).empty())
        throw InputError("optlog command \"" + printable(optlog) + "\" is not one program: " + what);
}

std::string hostCommand(const std::string &optlog, const std::vector<std::string> &arguments)
{
    requireHostProgram(optlog);
    std::vector<std::string> words{optlog};
    words.insert(words.end(), arguments.begin(), arguments.end());
    return shellCommand(words);
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
