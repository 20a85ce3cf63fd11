// SPDX-License-Identifier: MIT
#include "core/recording/recordedstream.h"

#include "core/config/config.h"
#include "core/config/configerror.h"
#include "core/config/recordedconfig.h"
#include "core/contract/engineevents.h"
#include "core/contract/format.h"
#include "core/contract/linereader.h"
#include "core/memorymodel/memorymodel.h"
#include "core/recording/studyrecorder.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <optional>
#include <stdexcept>

namespace optlog {

namespace {

// A stream that cannot be recorded: the message says which line and why.
class Refused : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

// Who wrote the stream, as the run keeps it.
std::string recorderOf(const RunStarted &start)
{
    return start.recorder.empty() ? std::string("optlog record") : start.recorder;
}

std::string lineLabel(int64_t number)
{
    return "line " + std::to_string(number) + " of the event stream";
}

// The event a line holds; Refused, with the line's number, when it holds none.
EngineEvent eventOn(const LineReader::Line &line, int64_t number)
{
    if (line.bytes > kMaxEventLineBytes)
        throw Refused(lineLabel(number) + " is " + std::to_string(line.bytes) + " bytes long, and a line is at most "
                      + std::to_string(kMaxEventLineBytes >> 20) + " MiB");
    ParsedEvent parsed = parseEngineEvent(line.text);
    if (!parsed.event)
        throw Refused(lineLabel(number) + ": " + parsed.error);
    return std::move(*parsed.event);
}

// The device a trainer outside the engine ran on, from its environment: on CUDA the chip its
// `device` names ("cuda:0 (NVIDIA H200)"), its `cuda_capability` and the workspace variables it
// ran with and whether its PyTorch has scaled_dot_product_attention (the Python module sends them);
// the chip not known where they are missing.
DeviceTerms recordedDeviceTerms(const RunConfig &config, const std::string &environmentJson)
{
    if (config.runtime.device != "cuda")
        return assumedDeviceTerms(config);
    const nlohmann::json environment = nlohmann::json::parse(environmentJson, nullptr, false);
    if (!environment.is_object())
        return assumedDeviceTerms(config);
    const std::string device = environment.value("device", ""), open = " (";
    const std::string chip = device.find(open) != std::string::npos && device.back() == ')'
                                 ? device.substr(device.find(open) + 2, device.size() - device.find(open) - 3)
                                 : "";
    const nlohmann::json variables = environment.value("variables", nlohmann::json::object());
    const EnvironmentLookup lookup = [&variables](const std::string &name) -> std::optional<std::string> {
        if (!variables.is_object() || !variables.contains(name) || !variables[name].is_string())
            return std::nullopt;
        return variables[name].get<std::string>();
    };
    DeviceTerms terms = cudaDeviceTerms(ComputeCapability::parse(environment.value("cuda_capability", "")), chip,
                                        environment.value("torch_version", ""), lookup);
    terms.hasSdpa = environment.value("has_sdpa", terms.hasSdpa);
    return terms;
}

// The memory model's prediction for the GPT the trainer names in engine config keys, on the device
// its environment names; none when it names none, Refused naming the key when the engine could not
// train that config.
std::vector<MemoryRow> predictedMemory(const RunStarted &start)
{
    if (start.engineConfigJson.empty())
        return {};
    try {
        RunConfig config;
        applyTomlText(config, recordedConfigToml(start.engineConfigJson), "the started event's engine_config");
        validate(config);
        return estimateMemory(config, recordedDeviceTerms(config, start.environmentJson)).rows();
    } catch (const ConfigError &e) {
        throw Refused(std::string("engine_config: ") + e.what());
    }
}

// The run the stream's first line asks for, created in the study with the prediction, if any;
// Refused before anything is written when it cannot be.
int64_t createRecordedRun(Store &store, const RunStarted &start, const std::vector<MemoryRow> &predicted)
{
    if (start.name.empty())
        throw Refused("the started event has no 'name': give the run a name (docs/events.md)");
    for (const auto &[what, text] : {std::pair{"name", &start.name}, {"group", &start.group}}) {
        if (const std::string problem = unprintableCharacter(*text); !problem.empty())
            throw Refused(std::string("the run's ") + what + " \"" + printable(*text) + "\" holds " + problem + "; a "
                          + what + " is one line of plain text");
        if (text->size() > kMaxNameBytes)
            throw Refused(std::string("the run's ") + what + " is " + std::to_string(text->size())
                          + " bytes long: at most " + std::to_string(kMaxNameBytes));
    }
    if (const auto existing = store.findRun(start.name); existing && existing->name == start.name)
        throw Refused("the study already has a run named \"" + printable(start.name) + "\" (run "
                      + std::to_string(existing->id) + "): give this one another name");
    std::string configToml;
    try {
        configToml = recordedConfigToml(start.configJson.empty() ? "{}" : start.configJson);
    } catch (const ConfigError &e) {
        throw Refused(e.what());
    }
    const int64_t runId = store.createRun(start.name, configToml, start.group);
    nlohmann::json environment = nlohmann::json::parse(start.environmentJson.empty() ? "{}" : start.environmentJson);
    environment["recorder"] = recorderOf(start);
    if (start.totalSteps > 0)
        environment["planned_steps"] = start.totalSteps; // for a monitor's progress
    store.setEnvironment(runId, environment.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    if (!predicted.empty())
        store.replaceMemory(runId, predicted); // shown while the run trains, as an engine run's
    return runId;
}

// Keys added to (or replaced in) the run's stored environment.
void addToEnvironment(Store &store, int64_t runId, const nlohmann::json &keys)
{
    nlohmann::json environment = nlohmann::json::parse(store.requireRun(runId).environmentJson, nullptr,
                                                       /*allow_exceptions=*/false);
    if (!environment.is_object())
        environment = nlohmann::json::object();
    environment.update(keys);
    store.setEnvironment(runId, environment.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

// Every event after the first, checked for its order and handed to the recorder.
class StreamWriter
{
public:
    StreamWriter(Store &store, int64_t runId, StudyRecorder &recorder, std::vector<MemoryRow> predicted)
        : m_store(store)
        , m_runId(runId)
        , m_recorder(recorder)
        , m_predicted(std::move(predicted))
    { }

    // Whether the run has its outcome (a finished event came).
    bool finished() const { return m_finished.has_value(); }
    const TrainingOutcome &outcome() const { return *m_finished; }

    void take(const EngineEvent &event)
    {
        std::visit([this](const auto &body) { take(body); }, event.body);
    }

private:
    void take(const RunStarted &) { throw Refused("a second started event: a stream holds one run"); }

    void take(const StepDone &e)
    {
        const StepMetrics &m = e.metrics;
        if (m.step < 0 || m.step <= m_recorder.lastStep())
            throw Refused("step " + std::to_string(m.step) + " is not after step "
                          + std::to_string(m_recorder.lastStep()) + ": steps count up from 0");
        if (m.tokens < m_tokens)
            throw Refused("'tokens' is " + std::to_string(m.tokens) + " at step " + std::to_string(m.step)
                          + ", fewer than the " + std::to_string(m_tokens)
                          + " before it: tokens count every token trained on so far");
        m_tokens = m.tokens;
        m_recorder.step(m);
    }

    void take(const Validated &e)
    {
        if (e.point.step <= m_lastValidation)
            throw Refused("a validation at step " + std::to_string(e.point.step) + " after one at step "
                          + std::to_string(m_lastValidation) + ": validations come in order of step");
        m_lastValidation = e.point.step;
        m_recorder.validated(e.point);
    }

    void take(const MemoryReport &e)
    {
        std::vector<MemoryRow> rows = m_predicted; // the prediction stays beside the measurement
        rows.insert(rows.end(), e.rows.begin(), e.rows.end());
        m_store.replaceMemory(m_runId, rows);
        if (!e.dtypesJson.empty())
            m_store.setDtypes(m_runId, e.dtypesJson);
        if (!e.peakMeasure.empty())
            addToEnvironment(m_store, m_runId, {{"peak_measure", e.peakMeasure}});
    }

    void take(const MemoryTimelineReport &e) { m_store.storeTimelines(m_runId, {e.timeline}); }

    void take(const ModelFlops &e)
    {
        nlohmann::json flops = {{"per_token", e.perToken}, {"how", e.how}};
        if (!e.counter.empty())
            flops["counter"] = e.counter;
        addToEnvironment(m_store, m_runId, {{"model_flops", flops}});
    }

    void take(const RunFinished &e)
    {
        TrainingOutcome outcome;
        outcome.outcome = e.outcome;
        outcome.step = e.step >= 0 ? e.step : m_recorder.lastStep();
        outcome.message = e.message;
        m_finished = outcome;
    }

    void take(const LogMessage &e) { m_recorder.event(e.kind, e.message, e.step); }

    Store &m_store;
    int64_t m_runId;
    StudyRecorder &m_recorder;
    std::vector<MemoryRow> m_predicted;
    int64_t m_tokens = 0;
    int64_t m_lastValidation = -1;
    std::optional<TrainingOutcome> m_finished;
};

// The stream's first event, which must start a run; Refused otherwise.
RunStarted firstEvent(LineReader &reader, RecordedStream &result)
{
    for (;;) {
        std::optional<LineReader::Line> line = reader.next(std::chrono::hours(24));
        if (!line) {
            if (reader.atEnd())
                throw Refused("the event stream is empty: its first line must be a started event (docs/events.md)");
            continue;
        }
        ++result.lines;
        if (line->bytes == 0)
            continue;
        const EngineEvent event = eventOn(*line, result.lines);
        if (const auto *started = std::get_if<RunStarted>(&event.body))
            return *started;
        throw Refused(lineLabel(result.lines) + " is a " + eventKindName(event.kind())
                      + " event: the first line must be a started event, which names the run");
    }
}

} // namespace

RecordedStream recordStream(Store &store, int fd, const MatmulPeakOf &matmulPeakOf)
{
    RecordedStream result;
    LineReader reader(fd, kMaxEventLineBytes);
    RunStarted start;
    std::vector<MemoryRow> predicted;
    try {
        start = firstEvent(reader, result);
        predicted = predictedMemory(start);
        result.runId = createRecordedRun(store, start, predicted);
    } catch (const Refused &e) {
        result.refused = true;
        result.message = e.what();
        return result;
    }

    StudyRecorder::Options options; // the engine's own thresholds for spikes and non-finite values
    StudyRecorder recorder(store, result.runId, start.totalSteps, options);
    StreamWriter writer(store, result.runId, recorder, std::move(predicted));
    TrainingOutcome outcome;
    try {
        recorder.started(start.message.empty() ? "recorded by " + recorderOf(start) : start.message);
        while (!writer.finished()) {
            std::optional<LineReader::Line> line = reader.next(std::chrono::seconds(1));
            if (!line) {
                if (reader.atEnd())
                    break;
                recorder.flush(); // the writer is quiet: what it sent is stored, for a monitor
                continue;
            }
            ++result.lines;
            if (line->bytes == 0)
                continue;
            const EngineEvent event = eventOn(*line, result.lines);
            try {
                writer.take(event);
            } catch (const Refused &e) {
                throw Refused(lineLabel(result.lines) + ": " + e.what());
            }
        }
        if (writer.finished()) {
            outcome = writer.outcome();
        } else {
            outcome.outcome = Outcome::Crashed;
            outcome.step = recorder.lastStep();
            outcome.message = "the event stream ended after " + std::to_string(result.lines)
                              + " lines without a finished event: its trainer stopped (killed or crashed)";
        }
    } catch (const Refused &e) {
        result.refused = true;
        outcome.outcome = Outcome::Failed;
        outcome.step = recorder.lastStep();
        outcome.message = std::string(e.what()) + "; the rows before it are kept";
    } catch (const StoreError &e) {
        outcome.outcome = Outcome::Failed; // the study, not the trainer, ended it
        outcome.step = recorder.lastStep();
        outcome = storeFailure(outcome, e);
        store.releaseSpace();
    }
    try {
        const nlohmann::json environment = nlohmann::json::parse(store.requireRun(result.runId).environmentJson);
        const nlohmann::json peak = matmulPeakOf(environment);
        addToEnvironment(store, result.runId, {{"matmul_peak", peak}});
        if (peak.contains("not_measured") && environment.contains("model_flops"))
            result.peakAdvice = peak["not_measured"].get<std::string>();
    } catch (const StoreError &) {
        // the outcome below says what the study refused
    } catch (const nlohmann::json::exception &) {
        // an environment the trainer wrote with other types: no MFU
    }
    outcome = recorder.finished(outcome);
    result.outcome = outcome.outcome;
    result.message = outcome.message;
    return result;
}

} // namespace optlog
