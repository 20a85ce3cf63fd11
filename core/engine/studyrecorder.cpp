// SPDX-License-Identifier: MIT
#include "core/engine/studyrecorder.h"

#include <nlohmann/json.hpp>

#include <iostream>

namespace optlog {

StudyRecorder::StudyRecorder(Store &store, int64_t runId, int64_t totalSteps, Options options)
    : m_store(store)
    , m_runId(runId)
    , m_totalSteps(totalSteps)
    , m_options(options)
    , m_lastFlush(std::chrono::steady_clock::now())
    , m_start(m_lastFlush)
{
    emitJson(nlohmann::json{{"event", "started"}, {"run", runId}, {"steps", totalSteps}}.dump());
}

void StudyRecorder::step(const StepMetrics &m)
{
    m_pendingMetrics.push_back(m);
    if (!m_options.jsonLines)
        return progressAndFlush(m);
    // Built only when someone reads the events: this runs every step.
    nlohmann::json event{{"event", "step"},
                            {"run", m_runId},
                            {"step", m.step},
                            {"tokens", m.tokens},
                            {"train_loss", m.trainLoss},
                            {"lr", m.learningRate},
                            {"grad_norm", m.gradNorm},
                            {"step_seconds", m.stepSeconds},
                            {"tokens_per_second", m.tokensPerSecond},
                            {"loss_scale", m.lossScale},
                            {"skipped", m.skipped}};
    if (m.machineGflops > 0)
        event["machine_gflops"] = m.machineGflops;
    if (m_options.allocatorBytes) {
        const auto [inUse, peak] = m_options.allocatorBytes();
        event["allocated_bytes"] = inUse;
        event["peak_bytes"] = peak;
    }
    emitJson(event.dump());
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
    emitJson(nlohmann::json{{"event", "validation"}, {"run", m_runId}, {"step", p.step}, {"tokens", p.tokens},
                            {"val_loss", p.loss}}
                 .dump());
    flush();
}

void StudyRecorder::event(const std::string &kind, const std::string &message)
{
    m_store.addEvent(m_runId, kind, message);
    emitJson(nlohmann::json{{"event", kind}, {"run", m_runId}, {"message", message}}.dump());
}

void StudyRecorder::flush()
{
    m_store.appendMetrics(m_runId, m_pendingMetrics);
    m_store.appendValidation(m_runId, m_pendingValidation);
    m_pendingMetrics.clear();
    m_pendingValidation.clear();
    m_lastFlush = std::chrono::steady_clock::now();
}

void StudyRecorder::finished(Outcome outcome, int64_t step, const std::string &message)
{
    flush();
    m_store.finishRun(m_runId, outcome, step, message);
    if (m_options.progress)
        std::fprintf(stderr, "\n");
    emitJson(nlohmann::json{{"event", "finished"}, {"run", m_runId}, {"outcome", outcomeName(outcome)}, {"step", step},
                            {"message", message}}
                 .dump());
}

void StudyRecorder::emitJson(const std::string &jsonLine)
{
    if (m_options.jsonLines)
        std::cout << jsonLine << std::endl; // flushed per line: the GUI reads it as it comes
}

} // namespace optlog
