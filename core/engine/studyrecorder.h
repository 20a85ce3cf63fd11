// SPDX-License-Identifier: MIT
#pragma once

#include "core/engine/trainer.h"
#include "core/store/store.h"

#include <chrono>
#include <functional>
#include <utility>
#include <cstdio>
#include <vector>

namespace optlog {

// Writes what the trainer reports to the study in batched transactions (at most about one a
// second), and optionally as JSON lines on stdout (for the GUI) and a progress line on a terminal.
class StudyRecorder final : public TrainingObserver
{
public:
    struct Options
    {
        bool jsonLines = false; // one JSON event per line on stdout
        bool progress = false;  // a rewritten status line on stderr
        double flushSeconds = 1.0;
        // Allocator bytes {in use, peak} put into each step event for a live monitor; may be empty.
        std::function<std::pair<int64_t, int64_t>()> allocatorBytes;
    };

    StudyRecorder(Store &store, int64_t runId, int64_t totalSteps, Options options);

    // The run's start, with what it starts with (data, threads, device): stored and announced.
    void started(const std::string &message);
    void step(const StepMetrics &metrics) override;
    void validated(const ValidationPoint &point) override;
    void event(EventKind kind, const std::string &message) override;
    // Writes every buffered row; call before the run's outcome is stored.
    void flush();
    void finished(Outcome outcome, int64_t step, const std::string &message);

private:
    void progressAndFlush(const StepMetrics &m); // status line, and a batched write every flushSeconds
    void emit(decltype(EngineEvent::body) body); // as a JSON line, when asked for them

    Store &m_store;
    int64_t m_runId;
    int64_t m_totalSteps;
    Options m_options;
    std::vector<StepMetrics> m_pendingMetrics;
    std::vector<ValidationPoint> m_pendingValidation;
    std::chrono::steady_clock::time_point m_lastFlush;
    std::chrono::steady_clock::time_point m_start;
    double m_lastValidation = -1;
};

} // namespace optlog
