// SPDX-License-Identifier: MIT
#include "core/remote/followedrun.h"

#include "core/contract/format.h"
#include "core/contract/inputerror.h"
#include "core/contract/linereader.h"
#include "core/remote/hostlist.h"
#include "core/remote/runstream.h"
#include "core/remote/sshclient.h"
#include "core/store/remoteruns.h"

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
    return hostCommand(run.place.optlog, streamRequest(run.place.study, run.place.runId, end));
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

// What one connection's stream brought into the copy, and how it ended.
struct StreamRead
{
    int64_t lines = 0;
    std::string garbage;                 // "line 3 of its stream: ...": what could not be read
    std::optional<RunFinished> finished; // the run's end, stored
    bool ended = false;                  // the stream's output ended by itself
};

// Stores `stream`'s events into the copy of `runId` until the run's end, a line that is not an
// event, a stop, or the end of its output; `onLine` hears of each event line before it is stored
// (its number on this connection, from 1). Steps and validations are flushed at least every
// options.flushEvery, and whatever is left at the end.
StreamRead readStream(Store &store, int64_t runId, SshStream &stream, const FollowOptions &options,
                      const std::function<bool()> &stopped, const std::function<void(int64_t line)> &onLine)
{
    LineReader reader(stream.output(), kMaxEventLineBytes);
    FollowedCopy copy(store, runId);
    StreamRead read;
    auto lastFlush = std::chrono::steady_clock::now();
    while (!copy.finished() && !stopped()) {
        std::optional<LineReader::Line> line = reader.next(options.flushEvery);
        const auto now = std::chrono::steady_clock::now();
        if (line && !line->terminated)
            break; // the connection dropped mid-line: that row comes again over the next one
        if (line) {
            ++read.lines;
            ParsedEvent parsed = parseEngineEvent(line->text);
            if (!parsed.event || (read.lines == 1 && parsed.event->kind() != EventKind::Started)) {
                read.garbage = "line " + std::to_string(read.lines) + " of its stream: "
                               + (parsed.event ? "it does not begin with a started event" : parsed.error);
                break;
            }
            onLine(read.lines);
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
    if (copy.finished())
        read.finished = copy.outcome();
    read.ended = reader.atEnd();
    return read;
}

// Again after 1 s where the last connection brought rows, else up to 5 s apart as attempts fail,
// in slices that a stop request cuts short.
void waitToReconnect(const FollowOptions &options, bool broughtRows, int attempt, const std::function<bool()> &stopped)
{
    const auto pause = std::chrono::milliseconds(broughtRows ? 1000 : std::min(5000, 1000 * (attempt + 1)));
    for (auto waited = std::chrono::milliseconds(0); waited < pause && !stopped(); waited += options.flushEvery)
        std::this_thread::sleep_for(options.flushEvery);
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
        const StreamRead read = readStream(store, run.runId, stream, options, stopped, [&](int64_t line) {
            lastContact = std::chrono::steady_clock::now();
            if (line == 1 && dropped)
                say("reconnected to " + run.place.host + "; going on after step "
                    + std::to_string(lastStepOf(store, run.runId)));
            else if (line == 1 && attempt == 0)
                say("following run " + std::to_string(run.place.runId) + " of " + run.place.study + " on "
                    + run.place.host);
        });
        if (read.finished) {
            result.end = FollowResult::End::Finished;
            result.outcome = read.finished->outcome;
            result.message = read.finished->message;
            break;
        }
        if (!read.garbage.empty()) {
            result.end = FollowResult::End::Refused;
            result.message = "cannot read the run from " + run.place.host + ": " + read.garbage
                             + "; the rows before it are kept, and the run goes on there";
            break;
        }
        if (stopped()) {
            result.end = FollowResult::End::Stopped;
            break;
        }
        if (!read.ended)
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
        if (!dropped || read.lines > 0)
            say("connection to " + run.place.host + " lost, reconnecting; last row at step "
                + std::to_string(lastStepOf(store, run.runId)) + ended.why);
        dropped = true;
        waitToReconnect(options, read.lines > 0, attempt, stopped);
    }
    result.lastStep = lastStepOf(store, run.runId);
    return result;
}

} // namespace optlog
