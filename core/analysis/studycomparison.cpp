// SPDX-License-Identifier: MIT
#include "core/analysis/studycomparison.h"

#include "core/analysis/decisions.h"
#include "core/analysis/runtables.h"

#include <algorithm>
#include <optional>

namespace optlog {

GroupSummary findGroup(const Store &store, const std::vector<RunSummary> &summaries, const std::string &name)
{
    for (auto &group : groupRuns(summaries))
        if (group.name == name)
            return group;
    GroupSummary alone{name, {}};
    if (const auto run = store.findRun(name))
        for (const auto &s : summaries)
            if (s.run.id == run->id)
                alone.replicates.push_back(s);
    return alone;
}

StudyComparison compareStudy(const Store &store, const ComparisonRequest &request)
{
    std::vector<RunSummary> summaries;
    for (const auto &run : store.runs())
        summaries.push_back(summarize(store, run));
    if (summaries.empty())
        throw StoreError(store.path() + " has no runs yet; `optlog study` runs the default study");

    StudyComparison comparison;
    comparison.tolerance = request.tolerance;
    if (request.runs.empty()) {
        // Every group but the archived runs: archiving hides a run unless it is asked for by name.
        std::vector<RunSummary> shown;
        for (const auto &s : summaries)
            if (!s.run.archived)
                shown.push_back(s);
        if (shown.empty())
            throw StoreError(store.path() + " has only archived runs; name them (--runs) to compare them");
        comparison.groups = groupRuns(shown);
    } else {
        for (const auto &name : request.runs) {
            GroupSummary group = findGroup(store, summaries, name);
            if (group.replicates.empty())
                throw StoreError("no run or group '" + name + "' in " + store.path());
            comparison.groups.push_back(std::move(group));
        }
    }
    const auto indexOf = [&](const std::string &name) {
        for (size_t i = 0; i < comparison.groups.size(); ++i)
            if (comparison.groups[i].name == name)
                return std::optional(i);
        // A run named by its own name or id stands for the group it belongs to.
        if (const auto run = store.findRun(name))
            for (size_t i = 0; i < comparison.groups.size(); ++i)
                for (const auto &r : comparison.groups[i].replicates)
                    if (r.run.id == run->id)
                        return std::optional(i);
        return std::optional<size_t>();
    };
    if (!request.baseline.empty()) {
        const auto found = indexOf(request.baseline);
        if (!found)
            throw StoreError("baseline '" + request.baseline + "' is not among the compared runs");
        comparison.baseline = *found;
    }
    // Each group against its own baseline where the plan names one (chunked against naive
    // attention at the same context, say), else against the study's.
    for (const auto &group : comparison.groups) {
        size_t against = comparison.baseline;
        const auto own = request.baselineOf.find(group.name);
        if (own != request.baselineOf.end())
            against = indexOf(own->second).value_or(comparison.baseline);
        ComparisonRow row = compare(comparison.groups[against], {group}, request.tolerance).front();
        row.ownBaseline = against != comparison.baseline;
        comparison.rows.push_back(row);
    }
    return comparison;
}

std::string formatStudyComparison(const std::string &study, const StudyComparison &comparison, bool wide)
{
    const std::string &baseline = comparison.groups[comparison.baseline].name;
    // Memory by role hardly moves between seeds: each group's first replicate speaks for it.
    std::vector<RunSummary> representatives;
    for (const auto &group : comparison.groups) {
        representatives.push_back(group.representative());
        representatives.back().run.name = group.name;
    }
    return "Study " + study + ", baseline " + baseline + "\n"
           + (wide ? formatComparison : formatDecisions)(comparison.rows, baseline, comparison.tolerance) + "\n"
           + formatMemoryByRole(representatives) + formatDataParallel(representatives);
}

} // namespace optlog
