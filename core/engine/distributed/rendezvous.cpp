// SPDX-License-Identifier: MIT
#include "core/engine/distributed/rendezvous.h"

#include "core/config/config.h"
#include "core/config/configerror.h"

#include <cstdlib>

namespace optlog {

namespace {

// Rank 0's port under srun where MASTER_PORT is not set: one of `count` ports from `first`, chosen
// by the job's id, so that two jobs on one node rarely take the same.
struct PortRange
{
    int64_t first;
    int64_t count;
};
constexpr PortRange kSrunPorts{20000, 20000};

} // namespace

Rendezvous parseRendezvous(const std::string &hostPort, int64_t rank, int64_t worldSize)
{
    const size_t colon = hostPort.rfind(':');
    const std::string host = colon == std::string::npos ? std::string() : hostPort.substr(0, colon);
    const std::string portText = colon == std::string::npos ? std::string() : hostPort.substr(colon + 1);
    char *end = nullptr;
    const long port = portText.empty() ? -1 : std::strtol(portText.c_str(), &end, 10);
    if (host.empty() || port < 1 || port > 65535 || *end != '\0')
        throw ConfigError("--rendezvous " + hostPort
                          + ": write HOST:PORT, the machine of rank 0 and a free TCP port "
                            "there, such as 10.0.0.1:29500");
    if (worldSize < 2 || worldSize > DistributedConfig::kMaxRanks)
        throw ConfigError("--world-size " + std::to_string(worldSize) + ": the ranks of the run, 2 to "
                          + std::to_string(DistributedConfig::kMaxRanks));
    if (rank < 0 || rank >= worldSize)
        throw ConfigError("--rank " + std::to_string(rank) + ": must be 0 to " + std::to_string(worldSize - 1)
                          + " for --world-size " + std::to_string(worldSize));
    return {host, uint16_t(port), rank, worldSize};
}

std::string firstSlurmNode(const std::string &nodeList)
{
    const size_t bracket = nodeList.find('['), comma = nodeList.find(',');
    if (bracket == std::string::npos || (comma != std::string::npos && comma < bracket))
        return nodeList.substr(0, comma);
    const size_t end = nodeList.find_first_of(",-]", bracket + 1);
    return nodeList.substr(0, bracket) + nodeList.substr(bracket + 1, end - bracket - 1);
}

std::optional<LauncherRank> launcherRank(const std::function<const char *(const char *)> &variable)
{
    const auto text = [&variable](const char *name) {
        const char *value = variable(name);
        return std::string(value ? value : "");
    };
    const auto number = [&text](const char *name) -> int64_t {
        const std::string value = text(name);
        char *end = nullptr;
        const long long parsed = value.empty() ? -1 : std::strtoll(value.c_str(), &end, 10);
        if (value.empty() || *end != '\0' || parsed < 0)
            throw ConfigError(std::string(name) + "=" + value + ": the launcher's " + name
                              + " must be a whole number, 0 or more");
        return parsed;
    };
    LauncherRank given;
    if (!text("RANK").empty() && !text("WORLD_SIZE").empty()) {
        given.launcher = "torchrun";
        given.rank = number("RANK");
        given.worldSize = number("WORLD_SIZE");
        if (text("MASTER_ADDR").empty() || text("MASTER_PORT").empty())
            throw ConfigError("RANK and WORLD_SIZE are set but MASTER_ADDR or MASTER_PORT is not: set both to rank "
                              "0's host and a free port there, as torchrun does");
        given.rendezvous = text("MASTER_ADDR") + ":" + text("MASTER_PORT");
    } else if (!text("SLURM_STEP_ID").empty() && !text("SLURM_PROCID").empty() && !text("SLURM_NTASKS").empty()) {
        given.launcher = "srun";
        given.rank = number("SLURM_PROCID");
        given.worldSize = number("SLURM_NTASKS");
        if (given.worldSize <= 1)
            return std::nullopt; // one task: a batch script's, or srun of a single run
        std::string host = text("MASTER_ADDR");
        if (host.empty())
            host = firstSlurmNode(text("SLURM_STEP_NODELIST").empty() ? text("SLURM_JOB_NODELIST")
                                                                      : text("SLURM_STEP_NODELIST"));
        std::string port = text("MASTER_PORT");
        if (port.empty())
            port = std::to_string(kSrunPorts.first
                                  + (text("SLURM_JOB_ID").empty() ? 0 : number("SLURM_JOB_ID") % kSrunPorts.count));
        if (host.empty())
            throw ConfigError("srun gave no SLURM_JOB_NODELIST to find rank 0's node; set MASTER_ADDR to it");
        given.rendezvous = host + ":" + port;
    } else {
        return std::nullopt;
    }
    if (given.worldSize <= 1)
        return std::nullopt;
    return given;
}

} // namespace optlog
