// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
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

// The rank a launcher gave this process, as torchrun and Slurm's srun say in the environment:
// MASTER_ADDR, MASTER_PORT, RANK and WORLD_SIZE where set (torchrun's names win), else SLURM_PROCID,
// SLURM_NTASKS and the first node of SLURM_JOB_NODELIST inside an srun step, with MASTER_PORT or a
// port made from SLURM_JOB_ID (so that two jobs on one node meet at different ports). None outside
// a launcher, or for one task. `variable` reads the environment (std::getenv; a map in the tests).
struct LauncherRank
{
    std::string launcher;   // "torchrun" or "srun": named in messages
    std::string rendezvous; // HOST:PORT of rank 0
    int64_t rank = 0;
    int64_t worldSize = 1;
};
std::optional<LauncherRank> launcherRank(const std::function<const char *(const char *)> &variable);
// The first host of a Slurm node list: "node[07-09,12],gpu1" -> "node07".
std::string firstSlurmNode(const std::string &nodeList);

} // namespace optlog
