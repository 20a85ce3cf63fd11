// SPDX-License-Identifier: MIT
#include "core/analysis/studycomparison.h"

#include <algorithm>

namespace optlog {

namespace {

// Every run, a rerun replacing the earlier run of its name.
std::vector<RunRecord> newestOfEachName(const std::vector<RunRecord> &runs)
{
    std::vector<RunRecord> chosen;
    std::map<std::string, size_t> newest;
    for (const auto &run : runs) {
        if (newest.count(run.name)) {
            chosen[newest[run.name]] = run;
        } else {
            newest[run.name] = chosen.size();
            chosen.push_back(run);
        }
    }
    return chosen;
}

} // namespace

StudyComparison compareStudy(const Store &store, const ComparisonRequest &request)
{
    std::vector<RunRecord> chosen;
    if (request.runs.empty()) {
        chosen = newestOfEachName(store.runs());
    } else {
        for (const auto &name : request.runs) {
            const auto run = store.findRun(name);
            if (!run)
                throw StoreError("no run '" + name + "' in " + store.path());
            chosen.push_back(*run);
        }
    }
    if (chosen.empty())
        throw StoreError(store.path() + " has no runs yet; `optlog study` runs the default study");

    StudyComparison comparison;
    comparison.tolerance = request.tolerance;
    for (const auto &run : chosen)
        comparison.runs.push_back(summarize(store, run));
    if (!request.baseline.empty()) {
        const auto found = store.findRun(request.baseline);
        const auto isBaseline = [&found](const RunSummary &s) { return found && s.run.id == found->id; };
        const auto it = std::find_if(comparison.runs.begin(), comparison.runs.end(), isBaseline);
        if (it == comparison.runs.end())
            throw StoreError("baseline '" + request.baseline + "' is not among the compared runs");
        comparison.baseline = size_t(it - comparison.runs.begin());
    }
    // Each run against its own baseline where the plan names one (chunked against naive attention
    // at the same context, say), else against the study's.
    const RunSummary &studyBaseline = comparison.runs[comparison.baseline];
    for (const auto &s : comparison.runs) {
        const RunSummary *against = &studyBaseline;
        const auto own = request.baselineOf.find(s.run.name);
        if (own != request.baselineOf.end())
            for (const auto &candidate : comparison.runs)
                if (candidate.run.name == own->second)
                    against = &candidate;
        ComparisonRow row = compare(*against, {s}, request.tolerance).front();
        if (against != &studyBaseline)
            row.verdict = "vs " + against->run.name + ": " + row.verdict;
        comparison.rows.push_back(row);
    }
    return comparison;
}

std::string formatStudyComparison(const std::string &study, const StudyComparison &comparison)
{
    const std::string &baseline = comparison.runs[comparison.baseline].run.name;
    return "Study " + study + ", baseline " + baseline + "\n"
           + formatComparison(comparison.rows, baseline, comparison.tolerance) + "\n"
           + formatMemoryByRole(comparison.runs);
}

} // namespace optlog
