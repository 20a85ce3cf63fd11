// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <string>

namespace optlog {

// Where the ranks of a run meet: rank 0 serves a c10d TCPStore at host:port (port 0: a free one,
// chosen when it starts), the others connect to it.
struct Rendezvous
{
    std::string host = "127.0.0.1";
    uint16_t port = 0;
    int64_t rank = 0;
    int64_t worldSize = 1;
};
// "HOST:PORT" with the rank and world size checked; throws ConfigError naming what is wrong.
Rendezvous parseRendezvous(const std::string &hostPort, int64_t rank, int64_t worldSize);

} // namespace optlog
