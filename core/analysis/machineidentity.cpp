// SPDX-License-Identifier: MIT
#include "core/analysis/machineidentity.h"

#include <nlohmann/json.hpp>

#include <cctype>

namespace optlog {

namespace {

std::string stringAt(const nlohmann::json &environment, const char *key)
{
    const auto found = environment.find(key);
    return found != environment.end() && found->is_string() ? found->get<std::string>() : std::string();
}

// "NVIDIA H200" of an engine run's "cuda:0 NVIDIA H200, 139.8 GiB" and of a recorded run's
// "cuda:0 (NVIDIA H200)"; "cpu" of "cpu".
std::string deviceNameIn(const std::string &device)
{
    const size_t space = device.find(' ');
    if (space == std::string::npos)
        return device;
    std::string name = device.substr(space + 1);
    if (name.size() >= 2 && name.front() == '(' && name.back() == ')')
        return name.substr(1, name.size() - 2);
    return name.substr(0, name.rfind(", "));
}

} // namespace

std::string releaseOf(const std::string &version)
{
    size_t end = 0, dots = 0;
    while (end < version.size()
           && (std::isdigit(static_cast<unsigned char>(version[end])) || (version[end] == '.' && dots < 2))) {
        dots += version[end] == '.';
        ++end;
    }
    return version.substr(0, end);
}

MachineIdentity MachineIdentity::of(const nlohmann::json &environment)
{
    MachineIdentity id;
    if (!environment.is_object())
        return id;
    id.cpuModel = stringAt(environment, "cpu_model");
    const auto cpus = environment.find("logical_cpus");
    id.logicalCpus = cpus != environment.end() && cpus->is_number_integer() ? cpus->get<int64_t>() : 0;
    id.device = stringAt(environment, "device_name");
    if (id.device.empty())
        id.device = deviceNameIn(stringAt(environment, "device"));
    if (id.device.empty())
        id.device = "cpu";
    id.driver = stringAt(environment, "driver");
    id.libtorch = stringAt(environment, "libtorch_version");
    if (id.libtorch.empty())
        id.libtorch = stringAt(environment, "torch_version");
    id.libtorch = releaseOf(id.libtorch);
    return id;
}

std::string MachineIdentity::text() const
{
    std::string out = cpuModel + ", " + std::to_string(logicalCpus) + " CPUs, " + device;
    if (!driver.empty())
        out += " (driver " + driver + ")";
    if (!libtorch.empty())
        out += ", LibTorch " + libtorch;
    return out;
}

} // namespace optlog
