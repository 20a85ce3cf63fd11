// SPDX-License-Identifier: MIT
#pragma once

#include "core/engine/distributed/rendezvous.h"

#include <ATen/core/Tensor.h>
#include <c10/util/intrusive_ptr.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace c10d {
class Store;
} // namespace c10d

namespace optlog {

// A collective failed: a rank died, hung past the timeout, or its connection broke.
class RankLost : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

// A joining rank was stopped (SIGINT, SIGTERM) before it reached rank 0.
class RankStopped : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

// The ranks of one data-parallel run: the rendezvous store, which also carries the run's config
// to the other ranks and their results back to rank 0, and LibTorch's c10d process group over
// Gloo. Every collective blocks until done and adds its wall time to takeCollectiveSeconds(); a
// failure throws RankLost with what the process group said.
class RankGroup
{
public:
    // Rank 0 starts serving the store at once (port() is then known); every rank joins the process
    // group in connect(), which waits up to `timeout` for all of them: Gloo's on the CPU, NCCL's
    // when `cuda` (written, not yet run on a GPU). A joining rank waits up to `timeout` for rank 0's
    // store, then throws RankLost; when `stop` turns true meanwhile, RankStopped.
    RankGroup(Rendezvous rendezvous, std::chrono::seconds timeout, const std::atomic<bool> *stop = nullptr);
    ~RankGroup();

    int64_t rank() const { return m_rendezvous.rank; }
    int64_t size() const { return m_rendezvous.worldSize; }
    uint16_t port() const; // the store's
    std::chrono::seconds timeout() const { return m_timeout; }
    // Before connect(): a joining rank learns the run's timeout from the config rank 0 publishes.
    void setTimeout(std::chrono::seconds timeout) { m_timeout = timeout; }
    void connect(bool cuda = false);

    // The store's values: set by one rank, read (waiting up to the timeout) by another.
    void publish(const std::string &key, const std::string &value);
    std::string read(const std::string &key);
    // Waits up to `timeout` for `key`; false when it did not come.
    bool wait(const std::string &key, std::chrono::milliseconds timeout);

    void allreduceSum(at::Tensor &tensor);
    void reduceSumTo(int64_t owner, at::Tensor &tensor);
    // Every rank's `part`, in rank order, into `parts` (one tensor per rank, each part's size).
    void allgather(std::vector<at::Tensor> &parts, at::Tensor &part);
    // Seconds spent in collectives since the last call.
    double takeCollectiveSeconds();

    // Rank 0 asks this, when a collective failed, which rank is gone: the launcher knows its
    // children; empty when it cannot tell.
    void setLostRankProbe(std::function<std::string()> probe) { m_lostRankProbe = std::move(probe); }
    std::string lostRank() const { return m_lostRankProbe ? m_lostRankProbe() : std::string(); }

private:
    // Which ranks never started to join, for connect()'s message: "rank 1 of 2 never joined within
    // 60 s (...; ".
    std::string missingRanks() const;
    template<typename Collective>
    void timed(const char *what, Collective &&collective);

    Rendezvous m_rendezvous;
    std::chrono::seconds m_timeout;
    c10::intrusive_ptr<c10d::Store> m_store;
    struct Collectives; // the c10d group, whose type differs between LibTorch 1.13 and 2.x
    std::unique_ptr<Collectives> m_collectives;
    double m_collectiveSeconds = 0;
    std::function<std::string()> m_lostRankProbe;
};

} // namespace optlog
