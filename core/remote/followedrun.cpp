// SPDX-License-Identifier: MIT
#include "core/remote/followedrun.h"

#include "core/contract/format.h"
#include "core/contract/inputerror.h"
#include "core/contract/linereader.h"
#include "core/remote/hostlist.h"
#include "core/remote/runstream.h"
#include "core/remote/sshclient.h"

#include <optional>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace optlog {

namespace {

// The rows of one connection's events, stored into the copy: steps and validations in batches (a
// transaction each, at most every flushEvery), the rest as they come.
class FollowedCopy
{
public:
    FollowedCopy(Store &store, int64_t runId)
        : m_store(store)
        , m_runId(runId)
    { }

    void take(const EngineEvent &event)
    {
        std::visit([this](const auto &body) { take(body); }, event.body);
    }
    void flush()
    {
        m_store.appendMetrics(m_runId, m_metrics);
        m_store.appendValidation(m_runId, m_validation);
        m_metrics.clear();
        m_validation.clear();
    }
    bool finished() const { return m_finished; }
    const RunFinished &outcome() const { return m_outcome; }

private:
    // The stream's first line carries the run's environment; a later one, its stored start message.
    void take(const RunStarted &e)
    {
        if (m_opened) {
            flush();
            m_store.appendEvents(m_runId, {{e.at.empty() ? utcNow() : e.at, EventKind::Started, e.message, -1}});
        } else if (!e.environmentJson.empty()) {
            m_store.setEnvironment(m_runId, e.environmentJson);
        }
        m_opened = true;
    }
    void take(const StepDone &e) { m_metrics.push_back(e.metrics); }
    void take(const Validated &e) { m_validation.push_back(e.point); }
    void take(const MemoryReport &e)
    {
        m_store.replaceMemory(m_runId, e.rows);
        if (!e.dtypesJson.empty())
            m_store.setDtypes(m_runId, e.dtypesJson);
    }
    void take(const ModelFlops &) { } // a host sends its run's environment, which holds them
    void take(const MemoryTimelineReport &e) { m_store.storeTimelines(m_runId, {e.timeline}); }
    void take(const LogMessage &e)
    {
        flush(); // in the order the host stored them
        m_store.appendEvents(m_runId, {{e.at.empty() ? utcNow() : e.at, e.kind, e.message, e.step}});
    }
    void take(const RunFinished &e)
    {
        flush();
        if (!e.environmentJson.empty())
            m_store.setEnvironment(m_runId, e.environmentJson);
        m_store.finishRun(m_runId, e.outcome, e.step, e.message, e.at);
        m_outcome = e;
        m_finished = true;
    }

    Store &m_store;
    int64_t m_runId;
    std::vector<StepMetrics> m_metrics;
    std::vector<ValidationPoint> m_validation;
    bool m_opened = false;
    bool m_finished = false;
    RunFinished m_outcome;
};

// The right to keep one copy up to date: an open-file-description lock on the run's byte of
// <study>.followers, held while this object lives and let go by the kernel when the process ends.
class FollowerLock
{
public:
    FollowerLock(const std::string &study, int64_t runId)
        : m_fd(::open((study + ".followers").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644))
    {
        struct flock range
        { };
        range.l_type = F_WRLCK;
        range.l_whence = SEEK_SET;
        range.l_start = off_t(runId);
        range.l_len = 1;
        m_held = m_fd >= 0 && ::fcntl(m_fd, F_OFD_SETLK, &range) == 0;
    }
    ~FollowerLock()
    {
        if (m_fd >= 0)
            ::close(m_fd);
    }
    FollowerLock(const FollowerLock &) = delete;
    FollowerLock &operator=(const FollowerLock &) = delete;
    bool held() const { return m_held; }

private:
    int m_fd;
    bool m_held = false;
};

int64_t lastStepOf(const Store &store, int64_t runId)
{
    const std::vector<StepMetrics> metrics = store.metrics(runId);
    return metrics.empty() ? -1 : metrics.back().step;
}

std::string streamCommand(const RemoteRun &run, const CopyEnd &end)
{
    return hostCommand(run.place.optlog,
                       {"host", "stream", "--db", run.place.study, "--run", std::to_string(run.place.runId),
                        "--metrics-from", std::to_string(end.metrics), "--validation-from",
                        std::to_string(end.validation), "--events-from", std::to_string(end.events)});
}

// What ssh's exit code and last words say about a connection that ended without the run's end.
struct ConnectionEnd
{
    bool refused = false; // the host answered, and said no: trying again would not help
    std::string why;
};
ConnectionEnd connectionEnd(const SshClient &client, const RemotePlace &place, int code, const std::string &errors)
{
    const std::string said = errors.empty() ? ""
                                            : ": " + printable(errors.substr(0, errors.find_last_not_of('\n') + 1));
    if (code == 127)
        return {true, client.destination() + " has no optlog at `" + place.optlog + "`" + said};
    if (code == kExitBadInput)
        return {true, client.destination() + " refused to stream run " + std::to_string(place.runId) + " of "
                          + place.study + said};
    return {false, said};
}

} // namespace

FollowResult followRemoteRun(Store &store, const RemoteRun &run, const FollowOptions &options)
{
    FollowResult result;
    std::optional<SshClient> client;
    try { // the place as the study holds it, checked before anything reaches ssh
        client.emplace(run.place.host);
        requireHostProgram(run.place.optlog);
    } catch (const InputError &e) {
        result.message = e.what();
        result.lastStep = lastStepOf(store, run.runId);
        return result; // Refused
    }
    const FollowerLock lock(store.path(), run.runId);
    if (!lock.held()) {
        result.end = FollowResult::End::Elsewhere;
        result.lastStep = lastStepOf(store, run.runId);
        return result;
    }
    auto say = [&](const std::string &text) {
        if (options.status)
            options.status(text);
    };
    auto stopped = [&] { return options.stop && options.stop->load(); };
    auto lastContact = std::chrono::steady_clock::now();
    bool dropped = false;
    for (int attempt = 0;; ++attempt) {
        if (stopped()) {
            result.end = FollowResult::End::Stopped;
            break;
        }
        SshStream stream(*client, streamCommand(run, copyEnd(store, run.runId)));
        LineReader reader(stream.output(), kMaxEventLineBytes);
        FollowedCopy copy(store, run.runId);
        auto lastFlush = std::chrono::steady_clock::now();
        int64_t lines = 0;
        std::string garbage;
        while (!copy.finished() && !stopped()) {
            std::optional<LineReader::Line> line = reader.next(options.flushEvery);
            const auto now = std::chrono::steady_clock::now();
            if (line && !line->terminated)
                break; // the connection dropped mid-line: that row comes again over the next one
            if (line) {
                ++lines;
                lastContact = now;
                ParsedEvent parsed = parseEngineEvent(line->text);
                if (!parsed.event || (lines == 1 && parsed.event->kind() != EventKind::Started)) {
                    garbage = parsed.event ? "it does not begin with a started event" : parsed.error;
                    garbage = "line " + std::to_string(lines) + " of its stream: " + garbage;
                    break;
                }
                if (lines == 1 && dropped)
                    say("reconnected to " + run.place.host + "; going on after step "
                        + std::to_string(lastStepOf(store, run.runId)));
                else if (lines == 1 && attempt == 0)
                    say("following run " + std::to_string(run.place.runId) + " of " + run.place.study + " on "
                        + run.place.host);
                copy.take(*parsed.event);
                if (options.stored)
                    options.stored(*parsed.event);
            } else if (reader.atEnd()) {
                break;
            }
            if (!line || now - lastFlush >= options.flushEvery) {
                copy.flush();
                lastFlush = now;
            }
        }
        copy.flush();
        if (copy.finished()) {
            result.end = FollowResult::End::Finished;
            result.outcome = copy.outcome().outcome;
            result.message = copy.outcome().message;
            break;
        }
        if (!garbage.empty()) {
            result.end = FollowResult::End::Refused;
            result.message = "cannot read the run from " + run.place.host + ": " + garbage
                             + "; the rows before it are kept, and the run goes on there";
            break;
        }
        if (stopped()) {
            result.end = FollowResult::End::Stopped;
            break;
        }
        if (!reader.atEnd())
            stream.kill(); // not ended by itself: a connection that stalls is given up here
        const ConnectionEnd ended = connectionEnd(*client, run.place, stream.wait(), stream.errors());
        if (ended.refused) {
            result.end = FollowResult::End::Refused;
            result.message = ended.why;
            break;
        }
        if (std::chrono::steady_clock::now() - lastContact > options.giveUpAfter) {
            result.end = FollowResult::End::GaveUp;
            result.message = "no connection to " + run.place.host + " for "
                             + std::to_string(options.giveUpAfter.count()) + " s" + ended.why;
            break;
        }
        const int64_t lastStep = lastStepOf(store, run.runId);
        if (!dropped || lines > 0)
            say("connection to " + run.place.host + " lost, reconnecting; last row at step " + std::to_string(lastStep)
                + ended.why);
        dropped = true;
        // Again after 1 s, then up to 5 s apart, in slices that a stop request cuts short.
        const auto pause = std::chrono::milliseconds(lines > 0 ? 1000 : std::min(5000, 1000 * (attempt + 1)));
        for (auto waited = std::chrono::milliseconds(0); waited < pause && !stopped(); waited += options.flushEvery)
            std::this_thread::sleep_for(options.flushEvery);
    }
    result.lastStep = lastStepOf(store, run.runId);
    return result;
}

} // namespace optlog
