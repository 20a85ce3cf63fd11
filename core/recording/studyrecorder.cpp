// SPDX-License-Identifier: MIT
#include "core/recording/studyrecorder.h"

#include "core/store/weights.h"

#include <iostream>

namespace optlog {

StudyRecorder::StudyRecorder(Store &store, int64_t runId, int64_t totalSteps, Options options)
    : m_store(store)
    , m_runId(runId)
    , m_totalSteps(totalSteps)
    , m_options(options)
    , m_instability(options.diagnostics)
    , m_lastFlush(std::chrono::steady_clock::now())
    , m_start(m_lastFlush)
{ }

void StudyRecorder::started(const std::string &message)
{
    m_store.addEvent(m_runId, EventKind::Started, message);
    RunStarted start;
    start.totalSteps = m_totalSteps;
    start.message = message;
    emit(start);
}

void StudyRecorder::step(const StepMetrics &m)
{
    m_pendingMetrics.push_back(m);
    m_lastStep = m.step;
    if (m_options.jsonLines) {
        // Built only when someone reads the events: this runs every step.
        StepDone done{m, std::nullopt, std::nullopt};
        if (m_options.allocatorBytes) {
            const auto [inUse, peak] = m_options.allocatorBytes();
            done.allocatedBytes = inUse;
            done.peakBytes = peak;
        }
        emit(done, /*mayWait=*/true);
    }
    for (const auto &found : m_instability.observe(m))
        event(found.kind, found.message, found.step);
    progressAndFlush(m);
}

void StudyRecorder::progressAndFlush(const StepMetrics &m)
{
    const auto now = std::chrono::steady_clock::now();
    if (m_options.progress) {
        const double elapsed = std::chrono::duration<double>(now - m_start).count();
        const double eta = elapsed / double(m.step + 1) * double(m_totalSteps - m.step - 1);
        std::fprintf(stderr, "\rstep %lld/%lld  %.0f tokens/s  loss %.4f  val %s  ETA %.0f s   ",
                     static_cast<long long>(m.step + 1), static_cast<long long>(m_totalSteps), m.tokensPerSecond,
                     m.trainLoss, m_lastValidation < 0 ? "-" : std::to_string(m_lastValidation).substr(0, 6).c_str(),
                     eta);
        std::fflush(stderr);
    }
    if (std::chrono::duration<double>(now - m_lastFlush).count() >= m_options.flushSeconds)
        flush();
}

void StudyRecorder::validated(const ValidationPoint &p)
{
    m_lastValidation = p.loss;
    m_pendingValidation.push_back(p);
    emit(Validated{p});
    flush();
}

void StudyRecorder::event(EventKind kind, const std::string &message, int64_t step)
{
    m_store.addEvent(m_runId, kind, message, step);
    emit(LogMessage{kind, message, step, {}});
    // A terminal shows a warning too (a run predicted to take hours, a skipped step), on its own line.
    if (m_options.progress && kind == EventKind::Warning)
        std::fprintf(stderr, "\rwarning: %s\n", message.c_str());
}

void StudyRecorder::numerics(const std::vector<TensorNumerics> &rows)
{
    m_store.appendNumerics(m_runId, rows);
}

void StudyRecorder::weightsWritten(const WeightFile &file)
{
    // The rows up to the file's step first: a run resumed from it must find every step before it.
    flush();
    addWeightFile(m_store, m_runId, file);
}

void StudyRecorder::memoryTimeline(const MemoryTimeline &timeline)
{
    m_store.storeTimelines(m_runId, {timeline});
    emit(MemoryTimelineReport{timeline});
}

void StudyRecorder::flush()
{
    m_store.appendMetrics(m_runId, m_pendingMetrics);
    m_store.appendValidation(m_runId, m_pendingValidation);
    m_pendingMetrics.clear();
    m_pendingValidation.clear();
    m_lastFlush = std::chrono::steady_clock::now();
}

TrainingOutcome StudyRecorder::finished(TrainingOutcome outcome)
{
    try {
        flush();
    } catch (const StoreError &e) {
        // The rows are lost with the space; the outcome, one small row, may still fit.
        m_pendingMetrics.clear();
        m_pendingValidation.clear();
        outcome = storeFailure(outcome, e);
        m_store.releaseSpace();
    }
    try {
        m_store.finishRun(m_runId, outcome.outcome, outcome.step, outcome.message);
    } catch (const StoreError &e) {
        // The stream and the terminal keep the cause the file cannot; the file will show the run
        // as crashed.
        outcome = storeFailure(outcome, e);
        outcome.message += "; this outcome could not be stored either";
    }
    if (m_options.progress)
        std::fprintf(stderr, "\n");
    emit(RunFinished{outcome.outcome, outcome.step, outcome.message, {}, {}});
    return outcome;
}

TrainingOutcome storeFailure(TrainingOutcome outcome, const StoreError &error)
{
    // Said once: a second failure of the same study adds nothing.
    if (outcome.message.find("the study stopped taking") == std::string::npos) {
        const std::string before = outcome.outcome == Outcome::Failed
                                       ? outcome.message
                                       : outcomeName(outcome.outcome) + std::string(outcome.message.empty() ? "" : ": ")
                                             + outcome.message;
        outcome.message = "the study stopped taking the run's rows: " + std::string(error.what())
                          + (before.empty() ? "" : " (before that the run had ended " + before + ")");
    }
    outcome.outcome = Outcome::Failed;
    return outcome;
}

void StudyRecorder::emit(decltype(EngineEvent::body) body, bool mayWait)
{
    if (!m_options.jsonLines)
        return;
    std::cout << toJsonLine({m_runId, std::move(body)}) << '\n';
    const auto now = std::chrono::steady_clock::now();
    if (!mayWait || now - m_lastLineFlush >= kStepLineWait) {
        std::cout.flush(); // the GUI reads the lines as they come
        m_lastLineFlush = now;
    }
}

} // namespace optlog
