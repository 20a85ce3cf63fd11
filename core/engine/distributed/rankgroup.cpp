// SPDX-License-Identifier: MIT
#include "core/engine/distributed/rankgroup.h"

#include "core/config/configerror.h"
#include "core/engine/distributed/collectives.h"

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#ifdef OPTLOG_HAS_GLOG
#include <glog/logging.h>
#endif

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <thread>

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

namespace optlog {

namespace {

// c10d reports each failed connection attempt through glog, raw and before the exception that
// optlog turns into its own message; glog also warns that it was never initialized. Both go: the
// user reads optlog's message. GLOG_minloglevel, where set, still decides.
void quietLibTorchLogging()
{
#ifdef OPTLOG_HAS_GLOG
    static std::once_flag once;
    std::call_once(once, [] {
        if (!google::IsGoogleLoggingInitialized())
            google::InitGoogleLogging("optlog");
        if (!std::getenv("GLOG_minloglevel"))
            FLAGS_minloglevel = google::GLOG_FATAL;
    });
#endif
}

// Whether something listens at host:port: a plain TCP connect, refused at once where nothing does.
// c10d's own client retries a refused connect in a busy loop until its timeout, so a joining rank
// asks this first, between pauses.
bool listening(const std::string &host, uint16_t port)
{
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo *found = nullptr;
    if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0)
        return false;
    bool answered = false;
    for (addrinfo *a = found; a && !answered; a = a->ai_next) {
        const int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0)
            continue;
        answered = ::connect(fd, a->ai_addr, a->ai_addrlen) == 0;
        close(fd);
    }
    freeaddrinfo(found);
    return answered;
}

// What LibTorch said, without the stack of frames c10::Error appends: the user reads one line.
std::string withoutBacktrace(const std::exception &e)
{
    if (const auto *error = dynamic_cast<const c10::Error *>(&e))
        return error->what_without_backtrace();
    std::string message = e.what();
    if (const size_t frames = message.find("\nException raised from"); frames != std::string::npos)
        message.resize(frames);
    return message;
}

// The store key a rank sets when it starts joining the process group: rank 0 can then name the
// ranks that never came.
std::string joinedKey(int64_t rank)
{
    return "optlog/joined/" + std::to_string(rank);
}

// The pause between a joining rank's attempts: a stop request is seen within it.
constexpr std::chrono::milliseconds kRetryPause(250);

} // namespace

RankGroup::RankGroup(Rendezvous rendezvous, std::chrono::seconds timeout, const std::atomic<bool> *stop)
    : m_rendezvous(std::move(rendezvous))
    , m_timeout(timeout)
{
    quietLibTorchLogging();
    c10d::TCPStoreOptions options;
    options.port = m_rendezvous.port;
    options.isServer = m_rendezvous.rank == 0;
    options.waitWorkers = false; // rank 0 starts the others after the store is up
    options.timeout = m_timeout;
    const std::string where = m_rendezvous.host + ":" + std::to_string(m_rendezvous.port);
    if (options.isServer) {
        try {
            m_store = c10::make_intrusive<c10d::TCPStore>(m_rendezvous.host, options);
        } catch (const std::exception &e) {
            throw RankLost("rank 0 could not serve the rendezvous at " + where + ": " + withoutBacktrace(e));
        }
        return;
    }
    // A joining rank tries for up to the timeout, pausing between attempts, so that a stop request
    // ends the wait at once rather than after c10d's own timeout.
    const auto deadline = std::chrono::steady_clock::now() + m_timeout;
    while (!m_store) {
        if (stop && stop->load())
            throw RankStopped("rank " + std::to_string(m_rendezvous.rank) + " was stopped while waiting for rank 0 at "
                              + where);
        const auto left = std::chrono::duration_cast<std::chrono::seconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0)
            throw RankLost("rank " + std::to_string(m_rendezvous.rank) + " could not reach rank 0's rendezvous at "
                           + where + " within " + std::to_string(m_timeout.count())
                           + " s: no rank 0 answered there (is it running, and is the address one this machine "
                             "can reach?)");
        if (!listening(m_rendezvous.host, m_rendezvous.port)) {
            std::this_thread::sleep_for(kRetryPause);
            continue;
        }
        options.timeout = left;
        try {
            m_store = c10::make_intrusive<c10d::TCPStore>(m_rendezvous.host, options);
        } catch (const std::exception &e) {
            throw RankLost("rank " + std::to_string(m_rendezvous.rank) + " could not join rank 0's rendezvous at "
                           + where + ": " + withoutBacktrace(e));
        }
    }
    m_store->setTimeout(m_timeout);
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
    publish(joinedKey(m_rendezvous.rank), "1");
    try {
        m_collectives->group = c10::make_intrusive<c10d::ProcessGroupGloo>(m_store, int(m_rendezvous.rank),
                                                                           int(m_rendezvous.worldSize), options);
    } catch (const std::exception &e) {
        throw RankLost(missingRanks() + withoutBacktrace(e) + ")");
    }
}

std::string RankGroup::missingRanks() const
{
    std::string missing;
    int64_t count = 0;
    try {
        for (int64_t rank = 0; rank < m_rendezvous.worldSize; ++rank)
            if (!m_store->check({joinedKey(rank)})) {
                missing += (missing.empty() ? "" : ", ") + std::to_string(rank);
                ++count;
            }
    } catch (const std::exception &) {
        count = 0; // the store itself is gone (rank 0 died): nothing to name
    }
    const std::string within = " within " + std::to_string(m_timeout.count()) + " s (";
    if (count == 0)
        return "the " + std::to_string(m_rendezvous.worldSize) + " ranks did not all join" + within;
    return std::string(count == 1 ? "rank " : "ranks ") + missing + " of " + std::to_string(m_rendezvous.worldSize)
           + " never joined" + within + "under a scheduler, its node may be down or its task not started; ";
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
                       + "' from the store: " + withoutBacktrace(e));
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
        throw RankLost(std::string(what) + " failed on rank " + std::to_string(m_rendezvous.rank) + ": "
                       + withoutBacktrace(e));
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
