// SPDX-License-Identifier: MIT
#include "core/remote/runstream.h"

#include "core/contract/engineevents.h"

#include <cerrno>
#include <set>
#include <thread>

#include <poll.h>
#include <unistd.h>

namespace optlog {

namespace {

// Writes every byte, or says the reader is gone (a closed pipe: SIGPIPE is ignored by the caller).
bool writeAll(int fd, const std::string &text)
{
    size_t written = 0;
    while (written < text.size()) {
        const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        written += size_t(n);
    }
    return true;
}

// Whether the reader of a pipe has closed it, while there is nothing to write (the engine is
// quiet): then the stream ends rather than outlive its connection.
bool readerGone(int fd)
{
    pollfd check{fd, 0, 0};
    return ::poll(&check, 1, 0) > 0 && (check.revents & (POLLERR | POLLHUP));
}

std::string line(int64_t runId, decltype(EngineEvent::body) body)
{
    EngineEvent event;
    event.run = runId;
    event.body = std::move(body);
    return toJsonLine(event) + "\n";
}

} // namespace

CopyEnd copyEnd(const Store &store, int64_t runId)
{
    return {int64_t(store.metrics(runId).size()), int64_t(store.validation(runId).size()),
            int64_t(store.events(runId).size())};
}

bool streamRun(Store &store, int64_t runId, const CopyEnd &from, int fd, std::chrono::milliseconds interval)
{
    CopyEnd sent = from;
    RunStarted started;
    started.environmentJson = store.requireRun(runId).environmentJson;
    started.message = "following run " + std::to_string(runId) + " of " + store.path();
    if (!writeAll(fd, line(runId, started)))
        return false;
    std::string memorySent;
    std::set<int64_t> timelinesSent; // by step
    for (;;) {
        // The outcome is read before the rows: an engine stores its last rows before its outcome,
        // so the rows read after an outcome are all of them. An engine that is gone (killed, its
        // machine rebooted) has its run stored crashed first: a study read while its engine is gone
        // only calls it crashed, and the copy must hold what the study holds.
        store.markCrashedRuns();
        RunRecord run = store.requireRun(runId);
        if (run.outcome == Outcome::Crashed) { // its engine may have gone between the two calls
            store.markCrashedRuns();
            run = store.requireRun(runId);
        }
        std::string batch;
        for (StepMetrics &m : store.metrics(runId, sent.metrics)) {
            batch += line(runId, StepDone{std::move(m), std::nullopt, std::nullopt});
            ++sent.metrics;
        }
        for (ValidationPoint &v : store.validation(runId, sent.validation)) {
            batch += line(runId, Validated{v});
            ++sent.validation;
        }
        for (EventRecord &e : store.events(runId, sent.events)) {
            if (e.kind == EventKind::Started) { // the engine's start message, which a started line carries
                RunStarted stored;
                stored.message = std::move(e.message);
                stored.at = std::move(e.at);
                batch += line(runId, stored);
            } else {
                batch += line(runId, LogMessage{e.kind, std::move(e.message), e.step, std::move(e.at)});
            }
            ++sent.events;
        }
        MemoryReport memory{store.memory(runId), run.dtypesJson, {}};
        const std::string memoryLine = line(runId, memory);
        if (memoryLine != memorySent && !memory.rows.empty()) {
            batch += memoryLine;
            memorySent = memoryLine;
        }
        // A step's timeline is stored whole once the step ends: each is sent once.
        for (MemoryTimeline &timeline : store.timelines(runId))
            if (timelinesSent.insert(timeline.step).second)
                batch += line(runId, MemoryTimelineReport{std::move(timeline)});
        if (run.isFinished())
            batch += line(runId,
                          RunFinished{*run.outcome, run.outcomeStep, run.message, run.finishedAt, run.environmentJson});
        if (batch.empty() ? readerGone(fd) : !writeAll(fd, batch))
            return false;
        if (run.isFinished())
            return true;
        std::this_thread::sleep_for(interval);
    }
}

} // namespace optlog
