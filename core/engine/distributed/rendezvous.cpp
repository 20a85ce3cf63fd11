// SPDX-License-Identifier: MIT
#include "core/engine/distributed/rendezvous.h"

#include "core/config/configerror.h"

#include <cstdlib>

namespace optlog {

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
    if (worldSize < 2 || worldSize > 64)
        throw ConfigError("--world-size " + std::to_string(worldSize) + ": the ranks of the run, 2 to 64");
    if (rank < 0 || rank >= worldSize)
        throw ConfigError("--rank " + std::to_string(rank) + ": must be 0 to " + std::to_string(worldSize - 1)
                          + " for --world-size " + std::to_string(worldSize));
    return {host, uint16_t(port), rank, worldSize};
}

} // namespace optlog
