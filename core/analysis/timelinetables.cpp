// SPDX-License-Identifier: MIT
#include "core/analysis/timelinetables.h"

#include "core/analysis/texttable.h"
#include "core/contract/format.h"

#include <sstream>

namespace optlog {

namespace {

// How the points were taken, in words.
std::string sourceText(const MemoryTimeline &timeline)
{
    if (timeline.source == "allocations")
        return "every allocation and free, " + std::to_string(timeline.events) + " events";
    if (timeline.source == "phase marks")
        return "the allocator read at each phase's start";
    return timeline.source;
}

bool hasMicrobatches(const MemoryTimeline &timeline)
{
    for (const TimelinePhase &phase : timeline.phases)
        if (phase.microbatch > 0)
            return true;
    return false;
}

} // namespace

std::string timelineTitle(const MemoryTimeline &timeline)
{
    std::string which;
    if (timeline.firstStep && timeline.measuredStep)
        which = ", the first and first measured";
    else if (timeline.firstStep)
        which = timeline.step == 0 ? ", the first, where AdamW's moments are made" : ", the first after resuming";
    else if (timeline.measuredStep)
        which = ", the first measured";
    std::string title = "step " + std::to_string(timeline.step) + which;
    const int64_t phase = timeline.peakPhase();
    if (phase >= 0)
        title += ": peak " + formatBytes(timeline.peakBytes()) + " at " + timeline.phases[size_t(phase)].name();
    return title + " (" + sourceText(timeline) + ")";
}

std::vector<std::string> timelinePhaseHeader()
{
    return {"phase", "began at", "peak", "rose by", "where the step peaks"};
}

std::vector<std::vector<std::string>> timelinePhaseRows(const MemoryTimeline &timeline)
{
    const bool microbatches = hasMicrobatches(timeline);
    const int64_t peakPhase = timeline.peakPhase();
    std::vector<std::vector<std::string>> rows;
    for (size_t i = 0; i < timeline.phases.size(); ++i) {
        const TimelinePhase &phase = timeline.phases[i];
        const bool ofMicrobatch = phase.part == StepPart::Forward || phase.part == StepPart::Loss
                                  || phase.part == StepPart::Backward;
        const std::string name = (microbatches && ofMicrobatch ? "microbatch " + std::to_string(phase.microbatch) + ": "
                                                               : std::string())
                                 + phase.name();
        rows.push_back({name, formatBytes(phase.startBytes), formatBytes(phase.peakBytes),
                        formatBytes(phase.peakBytes - phase.startBytes), int64_t(i) == peakPhase ? "<- here" : ""});
    }
    return rows;
}

std::string formatTimelines(const std::vector<MemoryTimeline> &timelines, const std::string &predictedPhase)
{
    if (timelines.empty())
        return "no memory timeline: an engine run records its first and first measured step (unless it ended "
               "before, or an optlog before timelines trained it); a recorded run, the step run.memory or a "
               "callback measured\n";
    std::ostringstream out;
    if (!predictedPhase.empty())
        out << "the memory model predicts a steady step's peak at " << predictedPhase << "\n\n";
    for (const MemoryTimeline &timeline : timelines) {
        out << timelineTitle(timeline) << "\n";
        std::vector<TextTable::Column> columns;
        const std::vector<std::string> header = timelinePhaseHeader();
        for (size_t i = 0; i < header.size(); ++i) // the figures right-aligned
            columns.push_back(
                {header[i], i == 0 || i + 1 == header.size() ? TextTable::Align::Left : TextTable::Align::Right});
        TextTable table(std::move(columns));
        for (std::vector<std::string> &row : timelinePhaseRows(timeline))
            table.addRow(std::move(row));
        out << table.render() << "\n";
    }
    return out.str();
}

} // namespace optlog
