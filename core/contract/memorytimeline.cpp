// SPDX-License-Identifier: MIT
#include "core/contract/memorytimeline.h"

#include "core/contract/inputerror.h"
#include "core/contract/jsonfields_p.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <iterator>

namespace optlog {

namespace {

using Internal::Fields;
using Internal::FormatError;
using Internal::shown;

constexpr std::pair<StepPart, const char *> kPartNames[] = {
    {StepPart::Forward, "forward"},
    {StepPart::Loss, "loss"},
    {StepPart::Backward, "backward"},
    {StepPart::GradientReduction, "gradient reduction"},
    {StepPart::Numerics, "numerics"},
    {StepPart::MasterGradients, "master gradients"},
    {StepPart::UnscaleAndClip, "unscale and clip"},
    {StepPart::OptimizerStep, "optimizer step"},
};

// A stream or a study may come from anywhere: a timeline is refused past these.
constexpr size_t kMaxPhases = 100000;
constexpr char kLossBlockName[] = "loss";

nlohmann::json statesToJson(const std::map<MemoryRole, int64_t> &states)
{
    nlohmann::json out = nlohmann::json::object();
    for (const auto &[role, bytes] : states)
        out[memoryRoleName(role)] = bytes;
    return out;
}

std::map<MemoryRole, int64_t> statesFromJson(const Fields &f, const char *key)
{
    std::map<MemoryRole, int64_t> states;
    if (!f.has(key))
        return states;
    const nlohmann::json &object = f.required(key);
    if (!object.is_object())
        throw FormatError(std::string("'") + key + "' must be an object of bytes by role, not " + shown(object));
    for (const auto &[name, bytes] : object.items()) {
        const std::optional<MemoryRole> role = memoryRoleNamed(name);
        if (!role || !isPeakPart(*role))
            throw FormatError(std::string("'") + key + "' has '" + name
                              + "', which is not a role of a model's states (parameters, gradients, master_weights, "
                                "optimizer_state, ...)");
        const nlohmann::json entry = {{"bytes", bytes}};
        const int64_t value = Fields(entry).integer("bytes");
        if (value < 0)
            throw FormatError(std::string("'") + key + "." + name + "' is negative");
        states[*role] = value;
    }
    return states;
}

TimelinePhase phaseFromJson(const nlohmann::json &json, size_t index)
{
    const std::string where = "phase " + std::to_string(index) + ": ";
    try {
        if (!json.is_object())
            throw FormatError("must be an object, not " + shown(json));
        const Fields f(json);
        TimelinePhase phase;
        const std::string part = f.text("part");
        const std::optional<StepPart> named = stepPartNamed(part);
        if (!named)
            throw FormatError("'part' is \"" + part
                              + "\": expected forward, loss, backward, gradient reduction, numerics, master "
                                "gradients, unscale and clip or optimizer step");
        phase.part = *named;
        if (f.has("block")) {
            const nlohmann::json &block = f.required("block");
            if (block.is_string() && block.get<std::string>() == kLossBlockName && phase.part == StepPart::Backward)
                phase.block = TimelinePhase::kLossBlock;
            else if ((phase.block = f.integer("block")) < 0)
                throw FormatError("'block' is " + shown(block)
                                  + ": expected a block's index from 0 (or \"loss\" "
                                    "for the backward of the loss)");
        }
        phase.microbatch = f.has("microbatch") ? f.integer("microbatch") : 0;
        phase.firstEvent = f.integer("first_event");
        phase.startBytes = f.integer("start_bytes");
        phase.peakBytes = f.integer("peak_bytes");
        if (phase.microbatch < 0 || phase.firstEvent < 0 || phase.startBytes < 0)
            throw FormatError("'microbatch', 'first_event' and 'start_bytes' cannot be negative");
        if (phase.peakBytes < phase.startBytes)
            throw FormatError("'peak_bytes' (" + std::to_string(phase.peakBytes) + ") is below 'start_bytes' ("
                              + std::to_string(phase.startBytes) + "): a phase's peak includes where it began");
        return phase;
    } catch (const FormatError &e) {
        throw FormatError(where + e.what());
    }
}

std::vector<int64_t> integers(const nlohmann::json &array, const char *key)
{
    if (!array.is_array())
        throw FormatError(std::string("'points.") + key + "' must be an array of integers, not " + shown(array));
    std::vector<int64_t> out;
    out.reserve(array.size());
    for (const nlohmann::json &value : array) {
        if (!value.is_number_integer() || value.get<int64_t>() < 0)
            throw FormatError(std::string("'points.") + key + "' holds " + shown(value) + ": expected integers from 0");
        out.push_back(value.get<int64_t>());
    }
    return out;
}

} // namespace

const char *stepPartName(StepPart part)
{
    for (const auto &[each, name] : kPartNames)
        if (each == part)
            return name;
    return "forward";
}

std::optional<StepPart> stepPartNamed(const std::string &name)
{
    for (const auto &[part, each] : kPartNames)
        if (name == each)
            return part;
    return std::nullopt;
}

std::string TimelinePhase::name() const
{
    std::string out = stepPartName(part);
    if (block == kLossBlock)
        out += ", loss";
    else if (block >= 0)
        out += ", block " + std::to_string(block);
    return out;
}

int64_t MemoryTimeline::peakBytes() const
{
    return bytesOfPoint.empty() ? 0 : *std::max_element(bytesOfPoint.begin(), bytesOfPoint.end());
}

int64_t MemoryTimeline::peakPhase() const
{
    if (bytesOfPoint.empty() || phases.empty())
        return -1;
    const auto highest = std::max_element(bytesOfPoint.begin(), bytesOfPoint.end());
    return int64_t(phaseOfEvent(eventOfPoint[size_t(std::distance(bytesOfPoint.begin(), highest))]));
}

size_t MemoryTimeline::phaseOfEvent(int64_t event) const
{
    const auto after = std::upper_bound(phases.begin(), phases.end(), event,
                                        [](int64_t e, const TimelinePhase &phase) { return e < phase.firstEvent; });
    return after == phases.begin() ? 0 : size_t(std::distance(phases.begin(), after) - 1);
}

nlohmann::json timelineToJson(const MemoryTimeline &timeline)
{
    nlohmann::json phases = nlohmann::json::array();
    for (const TimelinePhase &phase : timeline.phases) {
        nlohmann::json out = {{"part", stepPartName(phase.part)}, {"name", phase.name()},
                              {"microbatch", phase.microbatch},   {"first_event", phase.firstEvent},
                              {"start_bytes", phase.startBytes},  {"peak_bytes", phase.peakBytes}};
        if (phase.block == TimelinePhase::kLossBlock)
            out["block"] = kLossBlockName;
        else if (phase.block >= 0)
            out["block"] = phase.block;
        phases.push_back(std::move(out));
    }
    return {{"source", timeline.source},
            {"step", timeline.step},
            {"first_step", timeline.firstStep},
            {"measured_step", timeline.measuredStep},
            {"events", timeline.events},
            {"peak_bytes", timeline.peakBytes()},
            {"phases", phases},
            {"points", {{"event", timeline.eventOfPoint}, {"bytes", timeline.bytesOfPoint}}},
            {"states_before", statesToJson(timeline.statesBefore)},
            {"states_after", statesToJson(timeline.statesAfter)}};
}

MemoryTimeline timelineFromJson(const nlohmann::json &json)
{
    try {
        if (!json.is_object())
            throw FormatError("must be an object, not " + shown(json));
        const Fields f(json);
        MemoryTimeline t;
        t.source = f.text("source");
        t.step = f.integer("step");
        t.firstStep = f.has("first_step") && f.boolean("first_step");
        t.measuredStep = f.has("measured_step") && f.boolean("measured_step");
        t.events = f.integer("events");
        if (t.step < 0 || t.events < 0)
            throw FormatError("'step' and 'events' cannot be negative");
        const nlohmann::json &phases = f.required("phases");
        if (!phases.is_array() || phases.size() > kMaxPhases)
            throw FormatError("'phases' must be an array of at most " + std::to_string(kMaxPhases) + " phases, not "
                              + shown(phases));
        for (size_t i = 0; i < phases.size(); ++i) {
            t.phases.push_back(phaseFromJson(phases[i], i));
            const int64_t first = t.phases.back().firstEvent;
            if ((i == 0 && first != 0) || (i > 0 && first < t.phases[i - 1].firstEvent) || first > t.events)
                throw FormatError("phase " + std::to_string(i) + ": 'first_event' is " + std::to_string(first)
                                  + ": phases begin at event 0, in order, within the step's " + std::to_string(t.events)
                                  + " events");
        }
        const nlohmann::json &points = f.required("points");
        if (!points.is_object())
            throw FormatError("'points' must be an object {event: [...], bytes: [...]}, not " + shown(points));
        const Fields p(points);
        t.eventOfPoint = integers(p.required("event"), "event");
        t.bytesOfPoint = integers(p.required("bytes"), "bytes");
        if (t.eventOfPoint.size() != t.bytesOfPoint.size() || t.eventOfPoint.size() > MemoryTimeline::kMaxPoints)
            throw FormatError("'points.event' and 'points.bytes' must be as long as each other and at most "
                              + std::to_string(MemoryTimeline::kMaxPoints) + " long");
        if (!t.eventOfPoint.empty() && t.phases.empty())
            throw FormatError("has points but no phases");
        for (size_t i = 0; i < t.eventOfPoint.size(); ++i)
            if ((i > 0 && t.eventOfPoint[i] <= t.eventOfPoint[i - 1])
                || t.eventOfPoint[i] >= std::max<int64_t>(1, t.events))
                throw FormatError("'points.event' must rise, within the step's " + std::to_string(t.events)
                                  + " events; it holds " + std::to_string(t.eventOfPoint[i]) + " at "
                                  + std::to_string(i));
        t.statesBefore = statesFromJson(f, "states_before");
        t.statesAfter = statesFromJson(f, "states_after");
        return t;
    } catch (const FormatError &e) {
        throw InputError(std::string("a memory timeline ") + e.what());
    }
}

std::string timelineText(const MemoryTimeline &timeline)
{
    return timelineToJson(timeline).dump();
}

MemoryTimeline timelineFromText(const std::string &text)
{
    const nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded())
        throw InputError("a memory timeline is not JSON text");
    return timelineFromJson(json);
}

void thinPoints(MemoryTimeline &t, size_t maxPoints)
{
    const size_t total = t.eventOfPoint.size();
    if (total <= maxPoints || t.phases.empty())
        return;
    // Each phase's points: [begin, end) of the point arrays.
    std::vector<size_t> begins;
    for (const TimelinePhase &phase : t.phases)
        begins.push_back(size_t(std::lower_bound(t.eventOfPoint.begin(), t.eventOfPoint.end(), phase.firstEvent)
                                - t.eventOfPoint.begin()));
    begins.push_back(total);
    // A stretch keeps two points: one stretch each phase, the rest shared by their points.
    const size_t stretches = std::max<size_t>(maxPoints / 2, t.phases.size());
    const size_t spare = stretches - t.phases.size();
    std::vector<int64_t> events, bytes;
    for (size_t phase = 0; phase < t.phases.size(); ++phase) {
        const size_t begin = begins[phase], end = begins[phase + 1], count = end - begin;
        if (count == 0)
            continue;
        const size_t own = 1 + spare * count / total;
        for (size_t s = 0; s < own; ++s) {
            const size_t from = begin + count * s / own, to = begin + count * (s + 1) / own;
            if (from == to)
                continue;
            const auto first = t.bytesOfPoint.begin() + std::ptrdiff_t(from),
                       last = t.bytesOfPoint.begin() + std::ptrdiff_t(to);
            size_t low = size_t(std::min_element(first, last) - t.bytesOfPoint.begin());
            size_t high = size_t(std::max_element(first, last) - t.bytesOfPoint.begin());
            for (const size_t kept : {std::min(low, high), std::max(low, high)}) {
                if (!events.empty() && events.back() == t.eventOfPoint[kept])
                    continue;
                events.push_back(t.eventOfPoint[kept]);
                bytes.push_back(t.bytesOfPoint[kept]);
            }
        }
    }
    t.eventOfPoint = std::move(events);
    t.bytesOfPoint = std::move(bytes);
}

} // namespace optlog
