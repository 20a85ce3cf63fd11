// SPDX-License-Identifier: MIT
#include "core/contract/engineevents.h"

#include "core/contract/rowlookup.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

namespace optlog {

namespace {

// The wire format's keys: here and nowhere else.
constexpr char kEvent[] = "event";
constexpr char kRun[] = "run";
constexpr char kSteps[] = "steps";
constexpr char kMessage[] = "message";
constexpr char kStep[] = "step";
constexpr char kTokens[] = "tokens";
constexpr char kTrainLoss[] = "train_loss";
constexpr char kLearningRate[] = "lr";
constexpr char kGradNorm[] = "grad_norm";
constexpr char kStepSeconds[] = "step_seconds";
constexpr char kTokensPerSecond[] = "tokens_per_second";
constexpr char kLossScale[] = "loss_scale";
constexpr char kSkipped[] = "skipped";
constexpr char kMachineGflops[] = "machine_gflops";
constexpr char kAllocatedBytes[] = "allocated_bytes";
constexpr char kPeakBytes[] = "peak_bytes";
constexpr char kValidationLoss[] = "val_loss";
constexpr char kOutcome[] = "outcome";

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
    {EventKind::Note, "note"},
    {EventKind::Warning, "warning"},
    {EventKind::Oom, "oom"},
    {EventKind::LossSpike, "loss_spike", "loss spike", "loss spikes"},
    {EventKind::GradNormSpike, "grad_norm_spike", "gradient-norm spike", "gradient-norm spikes"},
    {EventKind::SkippedStep, "skipped_step", "skipped step", "skipped steps"},
    {EventKind::NonFinite, "non_finite", "non-finite value", "non-finite values"},
};

// Longer than any event the engine writes: a longer line is refused before it is parsed.
constexpr size_t kMaxLineBytes = 1 << 20;

class FormatError : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

// A value as an error message shows it: a scalar as written (cut short), a container by its type.
// Never the dump of a container, which recurses as deep as the container is nested.
std::string shown(const nlohmann::json &value)
{
    if (!value.is_primitive())
        return std::string("an ") + value.type_name();
    const std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return text.size() > 40 ? text.substr(0, 40) + "..." : text;
}

// Typed reads of one event object's keys; each failure names the key and what it should hold.
class Fields
{
public:
    explicit Fields(const nlohmann::json &object)
        : m_object(object)
    { }

    bool has(const char *key) const { return m_object.contains(key); }

    const nlohmann::json &required(const char *key) const
    {
        const auto it = m_object.find(key);
        if (it == m_object.end())
            throw FormatError(std::string("'") + key + "' is missing");
        return *it;
    }

    int64_t integer(const char *key) const
    {
        const nlohmann::json &value = required(key);
        const bool fits = value.is_number_integer()
                          && !(value.is_number_unsigned() && value.get<uint64_t>() > uint64_t(INT64_MAX));
        if (!fits)
            throw FormatError(std::string("'") + key + "' must be a 64-bit integer, not " + shown(value));
        return value.get<int64_t>();
    }

    // A number that may be non-finite: JSON writes those as null.
    double number(const char *key) const
    {
        const nlohmann::json &value = required(key);
        if (value.is_null())
            return std::numeric_limits<double>::quiet_NaN();
        if (!value.is_number())
            throw FormatError(std::string("'") + key + "' must be a number or null, not " + shown(value));
        return value.get<double>();
    }

    bool boolean(const char *key) const
    {
        const nlohmann::json &value = required(key);
        if (!value.is_boolean())
            throw FormatError(std::string("'") + key + "' must be true or false, not " + shown(value));
        return value.get<bool>();
    }

    std::string text(const char *key) const
    {
        const nlohmann::json &value = required(key);
        if (!value.is_string())
            throw FormatError(std::string("'") + key + "' must be a string, not " + shown(value));
        return value.get<std::string>();
    }

private:
    const nlohmann::json &m_object;
};

// Each kind's body: written by `write`, read back by `read`.
nlohmann::json write(const RunStarted &e)
{
    return {{kSteps, e.totalSteps}, {kMessage, e.message}};
}

nlohmann::json write(const StepDone &e)
{
    const StepMetrics &m = e.metrics;
    nlohmann::json out = {{kStep, m.step},
                          {kTokens, m.tokens},
                          {kTrainLoss, m.trainLoss},
                          {kLearningRate, m.learningRate},
                          {kGradNorm, m.gradNorm},
                          {kStepSeconds, m.stepSeconds},
                          {kTokensPerSecond, m.tokensPerSecond},
                          {kLossScale, m.lossScale},
                          {kSkipped, m.skipped}};
    if (m.machineGflops > 0)
        out[kMachineGflops] = m.machineGflops;
    if (e.allocatedBytes)
        out[kAllocatedBytes] = *e.allocatedBytes;
    if (e.peakBytes)
        out[kPeakBytes] = *e.peakBytes;
    return out;
}

nlohmann::json write(const Validated &e)
{
    return {{kStep, e.point.step}, {kTokens, e.point.tokens}, {kValidationLoss, e.point.loss}};
}

nlohmann::json write(const RunFinished &e)
{
    return {{kOutcome, outcomeName(e.outcome)}, {kStep, e.step}, {kMessage, e.message}};
}

nlohmann::json write(const LogMessage &e)
{
    nlohmann::json out = {{kMessage, e.message}};
    if (e.step >= 0)
        out[kStep] = e.step;
    return out;
}

RunStarted readStarted(const Fields &f)
{
    // The message is optional: a line from before it was sent is still a start.
    return {f.integer(kSteps), f.has(kMessage) ? f.text(kMessage) : std::string()};
}

StepDone readStep(const Fields &f)
{
    StepDone e;
    StepMetrics &m = e.metrics;
    m.step = f.integer(kStep);
    m.tokens = f.integer(kTokens);
    m.trainLoss = f.number(kTrainLoss);
    m.learningRate = f.number(kLearningRate);
    m.gradNorm = f.number(kGradNorm);
    m.stepSeconds = f.number(kStepSeconds);
    m.tokensPerSecond = f.number(kTokensPerSecond);
    m.lossScale = f.number(kLossScale);
    m.skipped = f.boolean(kSkipped);
    m.machineGflops = f.has(kMachineGflops) ? f.number(kMachineGflops) : 0.0;
    if (f.has(kAllocatedBytes))
        e.allocatedBytes = f.integer(kAllocatedBytes);
    if (f.has(kPeakBytes))
        e.peakBytes = f.integer(kPeakBytes);
    return e;
}

Validated readValidation(const Fields &f)
{
    return {{f.integer(kStep), f.integer(kTokens), f.number(kValidationLoss)}};
}

RunFinished readFinished(const Fields &f)
{
    const std::string name = f.text(kOutcome);
    const std::optional<Outcome> outcome = outcomeNamed(name);
    if (!outcome)
        throw FormatError("'outcome' is '" + name
                          + "', which is not an outcome (completed, diverged, failed, "
                            "cancelled, oom, crashed)");
    return {*outcome, f.integer(kStep), f.text(kMessage)};
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
    event.run = f.integer(kRun);
    switch (*kind) {
    case EventKind::Started: event.body = readStarted(f); break;
    case EventKind::Step: event.body = readStep(f); break;
    case EventKind::Validation: event.body = readValidation(f); break;
    case EventKind::Finished: event.body = readFinished(f); break;
    default: // the log messages
        event.body = LogMessage{*kind, f.text(kMessage), f.has(kStep) ? f.integer(kStep) : -1};
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
    if (line.size() > kMaxLineBytes)
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
