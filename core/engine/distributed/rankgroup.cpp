// SPDX-License-Identifier: MIT
#include "core/engine/distributed/rankgroup.h"

#include "core/config/configerror.h"
#include "core/engine/distributed/collectives.h"

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <cstdlib>

namespace optlog {

RankGroup::RankGroup(Rendezvous rendezvous, std::chrono::seconds timeout)
    : m_rendezvous(std::move(rendezvous))
    , m_timeout(timeout)
{
    c10d::TCPStoreOptions options;
    options.port = m_rendezvous.port;
    options.isServer = m_rendezvous.rank == 0;
    options.waitWorkers = false; // rank 0 starts the others after the store is up
    options.timeout = m_timeout;
    try {
        m_store = c10::make_intrusive<c10d::TCPStore>(m_rendezvous.host, options);
    } catch (const std::exception &e) {
        throw RankLost("rank " + std::to_string(m_rendezvous.rank) + " could not "
                       + (options.isServer ? "serve" : "reach") + " the rendezvous at " + m_rendezvous.host + ":"
                       + std::to_string(m_rendezvous.port) + ": " + c10::GetExceptionString(e));
    }
}

struct RankGroup::Collectives
{
    c10::intrusive_ptr<CollectiveBackend> group;
};

RankGroup::~RankGroup() = default;

uint16_t RankGroup::port() const
{
    return static_cast<c10d::TCPStore &>(*m_store).getPort();
}

void RankGroup::connect(bool cuda)
{
    m_collectives = std::make_unique<Collectives>();
    if (cuda) {
        m_collectives->group = ncclGroup(m_store, int(m_rendezvous.rank), int(m_rendezvous.worldSize), m_timeout);
        return;
    }
    auto options = c10d::ProcessGroupGloo::Options::create(m_timeout);
    // GLOO_SOCKET_IFNAME picks the network interface, as in PyTorch; locally the loopback.
    if (const char *interface = std::getenv("GLOO_SOCKET_IFNAME"); interface && *interface)
        options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(interface));
    else if (m_rendezvous.host == "127.0.0.1" || m_rendezvous.host == "localhost")
        options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
    else
        options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
    options->threads = 1;
    try {
        m_collectives->group = c10::make_intrusive<c10d::ProcessGroupGloo>(m_store, int(m_rendezvous.rank),
                                                                           int(m_rendezvous.worldSize), options);
    } catch (const std::exception &e) {
        throw RankLost("the " + std::to_string(m_rendezvous.worldSize) + " ranks did not all join within "
                       + std::to_string(m_timeout.count()) + " s: " + c10::GetExceptionString(e));
    }
}

void RankGroup::publish(const std::string &key, const std::string &value)
{
    m_store->set(key, std::vector<uint8_t>(value.begin(), value.end()));
}

std::string RankGroup::read(const std::string &key)
{
    try {
        const std::vector<uint8_t> value = m_store->get(key);
        return std::string(value.begin(), value.end());
    } catch (const std::exception &e) {
        throw RankLost("rank " + std::to_string(m_rendezvous.rank) + " did not receive '" + key
                       + "' from the store: " + c10::GetExceptionString(e));
    }
}

bool RankGroup::wait(const std::string &key, std::chrono::milliseconds timeout)
{
    try {
        m_store->wait({key}, timeout);
        return true;
    } catch (const std::exception &) {
        return false;
    }
}

template<typename Collective>
void RankGroup::timed(const char *what, Collective &&collective)
{
    const auto start = std::chrono::steady_clock::now();
    try {
        collective()->wait();
    } catch (const std::exception &e) {
        std::string message = c10::GetExceptionString(e);
        if (const size_t frames = message.find("\nException raised from"); frames != std::string::npos)
            message.resize(frames);
        throw RankLost(std::string(what) + " failed on rank " + std::to_string(m_rendezvous.rank) + ": " + message);
    }
    m_collectiveSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void RankGroup::allreduceSum(at::Tensor &tensor)
{
    std::vector<at::Tensor> tensors{tensor};
    timed("all-reduce", [&] { return m_collectives->group->allreduce(tensors); });
}

void RankGroup::reduceSumTo(int64_t owner, at::Tensor &tensor)
{
    std::vector<at::Tensor> tensors{tensor};
    c10d::ReduceOptions options;
    options.rootRank = owner;
    timed("reduce", [&] { return m_collectives->group->reduce(tensors, options); });
}

void RankGroup::allgather(std::vector<at::Tensor> &parts, at::Tensor &part)
{
    std::vector<std::vector<at::Tensor>> outputs{parts};
    std::vector<at::Tensor> inputs{part};
    timed("all-gather", [&] { return m_collectives->group->allgather(outputs, inputs); });
    for (size_t r = 0; r < parts.size(); ++r)
        if (!outputs[0][r].is_same(parts[r]))
            parts[r].copy_(outputs[0][r]);
}

double RankGroup::takeCollectiveSeconds()
{
    const double seconds = m_collectiveSeconds;
    m_collectiveSeconds = 0;
    return seconds;
}

} // namespace optlog
