// SPDX-License-Identifier: MIT
#pragma once

#include "core/analysis/runtables.h"
#include "core/analysis/studycomparison.h"
#include "core/config/config.h"
#include "core/config/configfields.h"
#include "core/store/store.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace optlog {

struct ReportRun
{
    RunSummary summary;
    std::string group;                                       // the replicates it belongs to
    std::string outcomeText;                                 // "diverged at step 12: loss is NaN", ...
    std::vector<FieldComparison> changes;                    // fields that differ from the baseline: {baseline, this}
    std::vector<std::pair<std::string, std::string>> dtypes; // weights, gradients, master weights, moments, compute
    std::vector<RoleMemory> memoryLines;                     // the summary's memory rows, by role
    std::vector<StepMetrics> metrics;
    std::string origin; // "derived from run 3 (fp32) of this study", or ""
};

// What a report is written as. Html, Pdf and Markdown draw charts (ui/report/reportwriter.h, with
// Qt); Csv and Json are text, and any build writes them.
enum class ReportFormat { Html, Pdf, Markdown, Csv, Json };
// Each format by its name ("html", "pdf", "md", "csv", "json"), then by the other names a user
// gives it ("htm", "markdown"): a file's suffix among them. Case does not matter.
std::optional<ReportFormat> reportFormatNamed(const std::string &name);
const std::vector<std::string> &reportFormatNames(); // "html", "pdf", "md", "csv", "json": one each
bool drawsCharts(ReportFormat format);

// A comparison someone else can check: the question and verdicts first, then charts, per-run
// detail and the environment needed to reproduce it. Built from the study file alone.
struct Report
{
    std::string study;       // file name of the study
    std::string baseline;    // the baseline group (a run alone is a group of one)
    double tolerance = 0.02; // nats per token counted as noise
    std::string createdAt;   // ISO 8601, UTC
    std::string optlogVersion;
    std::vector<ComparisonRow> groups; // the verdicts, one per group, the baseline's first
    std::vector<ReportRun> runs;       // every replicate, the baseline group's first
    // Reproduction facts: one row per fact; a fact that differs between runs lists each run's value.
    std::vector<std::pair<std::string, std::string>> environment;
};

// `runs` are groups, run names or ids (empty: every group of the study); `baseline` likewise
// (empty: the first group). Throws StoreError naming a run that is not in the study.
Report buildReport(const Store &store, const std::vector<std::string> &runs, const std::string &baseline,
                   double tolerance);

// A chart the report shows: its title, and where its image is (a path beside the report or a
// data: URI); the writers only reference it.
struct ReportChart
{
    std::string title;
    std::string source;
    bool wide = false; // one bar per run and source: takes the page's full width
};

// The writers, one file each (reportmarkdown.cpp, reporthtml.cpp, reportjson.cpp, reportcsv.cpp);
// they render the same sections (reportsections_p.h), so every format says the same thing.
std::string reportMarkdown(const Report &report, const std::vector<ReportChart> &charts);
// Self-contained when every chart source is a data: URI; no scripts, no network.
std::string reportHtml(const Report &report, const std::vector<ReportChart> &charts);
std::string reportJson(const Report &report); // summary, per-run detail and every step's metrics
std::string reportSummaryCsv(const Report &report);
std::string reportMetricsCsv(const Report &report); // one row per run and step

} // namespace optlog
