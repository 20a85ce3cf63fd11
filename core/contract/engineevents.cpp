// SPDX-License-Identifier: MIT
#include "core/contract/engineevents.h"

#include "core/contract/inputerror.h"
#include "core/contract/jsonfields_p.h"
#include "core/contract/recordkeys.h"
#include "core/contract/rowlookup.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

namespace optlog {

using Internal::Fields;
using Internal::FormatError;
using Internal::shown;

namespace {

// The wire format's keys: those a stored record shares from recordkeys.h, the rest here and
// nowhere else. `lr` and `val_loss` are the stream's own, shorter than the records'.
constexpr char kEvent[] = "event";
constexpr char kRun[] = "run";
constexpr char kSteps[] = "steps";
using recordkey::kMessage;
using recordkey::kStep;
using recordkey::kTokens;
using recordkey::kTrainLoss;
constexpr char kWireLearningRate[] = "lr";
using recordkey::kGradNorm;
using recordkey::kStepSeconds;
using recordkey::kTokensPerSecond;
constexpr char kLossScale[] = "loss_scale";
constexpr char kSkipped[] = "skipped";
constexpr char kMachineGflops[] = "machine_gflops";
constexpr char kAllocatedBytes[] = "allocated_bytes";
constexpr char kPeakBytes[] = "peak_bytes";
constexpr char kTimeline[] = "timeline";
using recordkey::kCommunicationSeconds;
constexpr char kAt[] = "at";
constexpr char kValidationLoss[] = "val_loss";
using recordkey::kOutcome;
constexpr char kFormat[] = "format";
using recordkey::kGroup;
using recordkey::kName;
constexpr char kConfig[] = "config";
using recordkey::kEnvironment;
constexpr char kRecorder[] = "recorder";
constexpr char kEngineConfig[] = "engine_config";
using recordkey::kSequences;
using recordkey::kSequenceSd;
constexpr char kRows[] = "rows";
using recordkey::kBytes;
using recordkey::kDtype;
using recordkey::kRole;
using recordkey::kSource;
constexpr char kDtypes[] = "dtypes";
constexpr char kPeakMeasure[] = "peak_measure";
constexpr char kPerToken[] = "per_token";
constexpr char kHow[] = "how";
constexpr char kCounter[] = "counter";

struct KindName
{
    EventKind kind;
    const char *name;
    const char *instability = nullptr;   // how a verdict counts them, one and several; only the
    const char *instabilities = nullptr; // instabilities have these
};

constexpr KindName kKindNames[] = {
    {EventKind::Started, "started"},
    {EventKind::Step, "step"},
    {EventKind::Validation, "validation"},
    {EventKind::Finished, "finished"},
    {EventKind::Memory, "memory"},
    {EventKind::Flops, "flops"},
    {EventKind::Timeline, "memory_timeline"},
    {EventKind::Note, "note"},
    {EventKind::Warning, "warning"},
    {EventKind::Oom, "oom"},
    {EventKind::LossSpike, "loss_spike", "loss spike", "loss spikes"},
    {EventKind::GradNormSpike, "grad_norm_spike", "gradient-norm spike", "gradient-norm spikes"},
    {EventKind::SkippedStep, "skipped_step", "skipped step", "skipped steps"},
    {EventKind::NonFinite, "non_finite", "non-finite value", "non-finite values"},
};

// An object held as JSON text, or null when the text is not one: the writer never throws.
nlohmann::json objectOrNull(const std::string &text)
{
    nlohmann::json object = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    return object.is_object() ? object : nlohmann::json();
}

// Each kind's body: written by `write`, read back by `read`.
nlohmann::json write(const RunStarted &e)
{
    nlohmann::json out = {{kFormat, kEventFormat}, {kSteps, e.totalSteps}, {kMessage, e.message}};
    for (const auto &[key, value] : {std::pair{kName, &e.name}, {kGroup, &e.group}, {kRecorder, &e.recorder}})
        if (!value->empty())
            out[key] = *value;
    for (const auto &[key, value] :
         {std::pair{kConfig, &e.configJson}, {kEnvironment, &e.environmentJson}, {kEngineConfig, &e.engineConfigJson}})
        if (!value->empty())
            out[key] = objectOrNull(*value);
    if (!e.at.empty())
        out[kAt] = e.at;
    return out;
}

nlohmann::json write(const StepDone &e)
{
    const StepMetrics &m = e.metrics;
    nlohmann::json out = {{kStep, m.step},
                          {kTokens, m.tokens},
                          {kTrainLoss, m.trainLoss},
                          {kWireLearningRate, m.learningRate},
                          {kGradNorm, m.gradNorm},
                          {kStepSeconds, m.stepSeconds},
                          {kTokensPerSecond, m.tokensPerSecond},
                          {kLossScale, m.lossScale},
                          {kSkipped, m.skipped}};
    if (m.machineGflops > 0)
        out[kMachineGflops] = m.machineGflops;
    if (m.communicationSeconds)
        out[kCommunicationSeconds] = *m.communicationSeconds;
    if (e.allocatedBytes)
        out[kAllocatedBytes] = *e.allocatedBytes;
    if (e.peakBytes)
        out[kPeakBytes] = *e.peakBytes;
    return out;
}

nlohmann::json write(const Validated &e)
{
    nlohmann::json out = {{kStep, e.point.step}, {kTokens, e.point.tokens}, {kValidationLoss, e.point.loss}};
    if (e.point.sequences > 0) {
        out[kSequences] = e.point.sequences;
        out[kSequenceSd] = e.point.sequenceSd;
    }
    return out;
}

nlohmann::json write(const MemoryTimelineReport &e)
{
    return {{kTimeline, timelineToJson(e.timeline)}};
}

nlohmann::json write(const MemoryReport &e)
{
    nlohmann::json rows = nlohmann::json::array();
    for (const MemoryRow &row : e.rows)
        rows.push_back({{kRole, memoryRoleName(row.role)},
                        {kBytes, row.bytes},
                        {kDtype, row.dtype},
                        {kSource, memorySourceName(row.source)}});
    nlohmann::json out = {{kRows, rows}};
    if (!e.dtypesJson.empty())
        out[kDtypes] = objectOrNull(e.dtypesJson);
    if (!e.peakMeasure.empty())
        out[kPeakMeasure] = e.peakMeasure;
    return out;
}

nlohmann::json write(const ModelFlops &e)
{
    nlohmann::json out = {{kPerToken, e.perToken}, {kHow, e.how}};
    if (!e.counter.empty())
        out[kCounter] = e.counter;
    return out;
}

nlohmann::json write(const RunFinished &e)
{
    nlohmann::json out = {{kOutcome, outcomeName(e.outcome)}, {kStep, e.step}, {kMessage, e.message}};
    if (!e.at.empty())
        out[kAt] = e.at;
    if (!e.environmentJson.empty())
        out[kEnvironment] = objectOrNull(e.environmentJson);
    return out;
}

nlohmann::json write(const LogMessage &e)
{
    nlohmann::json out = {{kMessage, e.message}};
    if (e.step >= 0)
        out[kStep] = e.step;
    if (!e.at.empty())
        out[kAt] = e.at;
    return out;
}

RunStarted readStarted(const Fields &f)
{
    const int64_t format = f.has(kFormat) ? f.integer(kFormat) : 1;
    if (format > kEventFormat || format < 1)
        throw FormatError("the stream is written in event format " + std::to_string(format) + ", and this optlog reads "
                          + "formats 1 to " + std::to_string(kEventFormat) + " (docs/events.md): update optlog");
    RunStarted e;
    // Only `steps` was ever sent by the engine; a trainer from outside may not know it.
    e.totalSteps = f.has(kSteps) ? f.integer(kSteps) : 0;
    e.message = f.textOr(kMessage);
    e.name = f.textOr(kName);
    e.group = f.textOr(kGroup);
    e.recorder = f.textOr(kRecorder);
    e.configJson = f.objectText(kConfig);
    e.environmentJson = f.objectText(kEnvironment);
    e.engineConfigJson = f.objectText(kEngineConfig);
    e.at = f.textOr(kAt);
    return e;
}

StepDone readStep(const Fields &f)
{
    StepDone e;
    StepMetrics &m = e.metrics;
    m.step = f.integer(kStep);
    m.tokens = f.integer(kTokens);
    m.trainLoss = f.number(kTrainLoss);
    // The engine writes every key; a trainer from outside may not know them all.
    const double unknown = std::numeric_limits<double>::quiet_NaN();
    m.learningRate = f.numberOr(kWireLearningRate, unknown);
    m.gradNorm = f.numberOr(kGradNorm, unknown);
    m.stepSeconds = f.numberOr(kStepSeconds, unknown);
    m.tokensPerSecond = f.numberOr(kTokensPerSecond, unknown);
    m.lossScale = f.numberOr(kLossScale, 0.0); // 0: no loss scaler
    m.skipped = f.has(kSkipped) && f.boolean(kSkipped);
    m.machineGflops = f.has(kMachineGflops) ? f.number(kMachineGflops) : 0.0;
    if (f.has(kAllocatedBytes))
        e.allocatedBytes = f.integer(kAllocatedBytes);
    if (f.has(kPeakBytes))
        e.peakBytes = f.integer(kPeakBytes);
    if (f.has(kCommunicationSeconds))
        m.communicationSeconds = f.number(kCommunicationSeconds);
    return e;
}

Validated readValidation(const Fields &f)
{
    Validated e{{f.integer(kStep), f.integer(kTokens), f.number(kValidationLoss)}};
    if (f.has(kSequences)) {
        e.point.sequences = f.integer(kSequences);
        e.point.sequenceSd = f.numberOr(kSequenceSd, 0.0);
    }
    return e;
}

MemoryRow readMemoryRow(const nlohmann::json &object, size_t index)
{
    const std::string where = "'rows' entry " + std::to_string(index + 1);
    if (!object.is_object())
        throw FormatError(where + " must be an object, not " + shown(object));
    const Fields f(object);
    try {
        MemoryRow row;
        const std::string role = f.text(kRole);
        const std::optional<MemoryRole> named = memoryRoleNamed(role);
        if (!named)
            throw FormatError("'role' is '" + role
                              + "', which is not a memory role (parameters, gradients, master_weights, "
                                "optimizer_state, communication_buffers, saved_activations, temporaries, peak, "
                                "peak_reserved, peak_rss)");
        row.role = *named;
        row.bytes = f.integer(kBytes);
        if (row.bytes < 0)
            throw FormatError("'bytes' is " + std::to_string(row.bytes) + ": a count of bytes is never negative");
        row.dtype = f.textOr(kDtype);
        if (f.has(kSource)) {
            const std::optional<MemorySource> source = memorySourceNamed(f.text(kSource));
            if (!source)
                throw FormatError("'source' is '" + f.text(kSource) + "', not measured or predicted");
            row.source = *source;
        }
        return row;
    } catch (const FormatError &e) {
        throw FormatError(where + ": " + e.what());
    }
}

MemoryReport readMemory(const Fields &f)
{
    const nlohmann::json &rows = f.required(kRows);
    if (!rows.is_array())
        throw FormatError("'rows' must be an array of {role, bytes, dtype, source}, not " + shown(rows));
    MemoryReport e;
    for (size_t i = 0; i < rows.size(); ++i)
        e.rows.push_back(readMemoryRow(rows[i], i));
    e.dtypesJson = f.objectText(kDtypes);
    e.peakMeasure = f.textOr(kPeakMeasure);
    return e;
}

ModelFlops readFlops(const Fields &f)
{
    ModelFlops e{f.number(kPerToken), f.has(kHow) ? f.text(kHow) : "given", f.textOr(kCounter)};
    if (!std::isfinite(e.perToken) || e.perToken <= 0)
        throw FormatError("'per_token' is " + shown(f.required(kPerToken))
                          + ": the model's FLOPs per token are a number above 0");
    if (e.how != "given" && e.how != "counted")
        throw FormatError("'how' is '" + e.how + "': given (by the trainer) or counted");
    return e;
}

MemoryTimelineReport readTimeline(const Fields &f)
{
    try {
        return {timelineFromJson(f.required(kTimeline))};
    } catch (const InputError &e) {
        throw FormatError(std::string("'timeline': ") + e.what());
    }
}

RunFinished readFinished(const Fields &f)
{
    const std::string name = f.text(kOutcome);
    const std::optional<Outcome> outcome = outcomeNamed(name);
    if (!outcome)
        throw FormatError("'outcome' is '" + name
                          + "', which is not an outcome (completed, diverged, failed, "
                            "cancelled, oom, crashed)");
    return {*outcome, f.has(kStep) ? f.integer(kStep) : -1, f.textOr(kMessage), f.textOr(kAt),
            f.objectText(kEnvironment)};
}

EngineEvent readEvent(const nlohmann::json &object)
{
    if (!object.is_object())
        throw FormatError("not a JSON object: " + shown(object));
    const Fields f(object);
    const std::string name = f.text(kEvent);
    const std::optional<EventKind> kind = eventKindNamed(name);
    if (!kind)
        throw FormatError("unknown event kind '" + name + "'");
    EngineEvent event;
    event.run = f.has(kRun) ? f.integer(kRun) : 0; // a trainer from outside leaves it to `optlog record`
    switch (*kind) {
    case EventKind::Started: event.body = readStarted(f); break;
    case EventKind::Step: event.body = readStep(f); break;
    case EventKind::Validation: event.body = readValidation(f); break;
    case EventKind::Memory: event.body = readMemory(f); break;
    case EventKind::Flops: event.body = readFlops(f); break;
    case EventKind::Timeline: event.body = readTimeline(f); break;
    case EventKind::Finished: event.body = readFinished(f); break;
    default: // the log messages
        event.body = LogMessage{*kind, f.text(kMessage), f.has(kStep) ? f.integer(kStep) : -1, f.textOr(kAt)};
    }
    return event;
}

} // namespace

const char *eventKindName(EventKind kind)
{
    return rowOf(kKindNames, &KindName::kind, kind).name;
}

std::optional<EventKind> eventKindNamed(const std::string &name)
{
    const KindName *entry = findRow(kKindNames, &KindName::name, name);
    return entry ? std::optional(entry->kind) : std::nullopt;
}

bool isInstability(EventKind kind)
{
    return rowOf(kKindNames, &KindName::kind, kind).instabilities != nullptr;
}

std::string instabilityCount(EventKind kind, int64_t count)
{
    const KindName &row = rowOf(kKindNames, &KindName::kind, kind);
    const char *words = count == 1 ? row.instability : row.instabilities;
    return std::to_string(count) + " " + (words ? words : row.name);
}

EventKind EngineEvent::kind() const
{
    struct KindOf
    {
        EventKind operator()(const RunStarted &) const { return EventKind::Started; }
        EventKind operator()(const StepDone &) const { return EventKind::Step; }
        EventKind operator()(const Validated &) const { return EventKind::Validation; }
        EventKind operator()(const MemoryReport &) const { return EventKind::Memory; }
        EventKind operator()(const ModelFlops &) const { return EventKind::Flops; }
        EventKind operator()(const MemoryTimelineReport &) const { return EventKind::Timeline; }
        EventKind operator()(const RunFinished &) const { return EventKind::Finished; }
        EventKind operator()(const LogMessage &e) const { return e.kind; }
    };
    return std::visit(KindOf{}, body);
}

std::string toJsonLine(const EngineEvent &event)
{
    nlohmann::json out = std::visit([](const auto &body) { return write(body); }, event.body);
    out[kEvent] = eventKindName(event.kind());
    out[kRun] = event.run;
    // A message may hold bytes that are not UTF-8 (a file name): replaced, never an exception.
    return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

ParsedEvent parseEngineEvent(const std::string &line)
{
    if (line.size() > kMaxEventLineBytes)
        return {std::nullopt, "a line of " + std::to_string(line.size()) + " bytes, longer than any event"};
    const nlohmann::json object = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (object.is_discarded())
        return {std::nullopt, "not JSON: " + line.substr(0, 40)};
    try {
        return {readEvent(object), {}};
    } catch (const FormatError &e) {
        return {std::nullopt, e.what()};
    } catch (const nlohmann::json::exception &e) {
        return {std::nullopt, e.what()}; // a number out of int64's range, say
    }
}

} // namespace optlog
