// SPDX-License-Identifier: MIT
#pragma once

#include "core/recording/instabilitydetector.h"
#include "core/recording/trainingobserver.h"
#include "core/store/store.h"

#include <chrono>
#include <cstdio>
#include <functional>
#include <utility>
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
        // What counts as a loss or gradient-norm spike.
        DiagnosticsConfig diagnostics;
    };

    // Each step's metrics also go through an InstabilityDetector; what it finds is an event.
    StudyRecorder(Store &store, int64_t runId, int64_t totalSteps, Options options);

    // The run's start, with what it starts with (data, threads, device): stored and announced.
    void started(const std::string &message);
    void step(const StepMetrics &metrics) override;
    void validated(const ValidationPoint &point) override;
    // Stored at once (events are rare), and announced.
    void event(EventKind kind, const std::string &message, int64_t step = -1) override;
    void numerics(const std::vector<TensorNumerics> &rows) override;
    void weightsWritten(const WeightFile &file) override;
    void memoryTimeline(const MemoryTimeline &timeline) override; // stored at once, and announced
    // Writes every buffered row; call before the run's outcome is stored.
    void flush();
    // Stores the outcome after the last rows, and announces it. When the study no longer takes
    // them (a full disk, an I/O error) the run has failed, and the announced and returned outcome
    // says so with the cause; it is stored if the study still takes that one row.
    TrainingOutcome finished(TrainingOutcome outcome);
    // The last step reported to step(); -1 before the first.
    int64_t lastStep() const { return m_lastStep; }

private:
    void progressAndFlush(const StepMetrics &m); // status line, and a batched write every flushSeconds
    // As a JSON line, when asked for them. A step's line may wait in stdout's buffer while the
    // last flush is under kStepLineWait old: each flush wakes the reader (the GUI, or any parent
    // on the pipe), and at steps of a millisecond that wake-up per step cost more than the line.
    // Every other event flushes, the held lines first, so a line waits at most for the next step.
    void emit(decltype(EngineEvent::body) body, bool mayWait = false);
    static constexpr std::chrono::milliseconds kStepLineWait{20};

    Store &m_store;
    int64_t m_runId;
    int64_t m_totalSteps;
    Options m_options;
    InstabilityDetector m_instability;
    std::vector<StepMetrics> m_pendingMetrics;
    std::vector<ValidationPoint> m_pendingValidation;
    std::chrono::steady_clock::time_point m_lastFlush;
    std::chrono::steady_clock::time_point m_lastLineFlush; // of stdout's JSON lines
    std::chrono::steady_clock::time_point m_start;
    double m_lastValidation = -1;
    int64_t m_lastStep = -1;
};

// `outcome` as failed because the study stopped taking rows (`error`), keeping what it was before.
TrainingOutcome storeFailure(TrainingOutcome outcome, const StoreError &error);

} // namespace optlog
