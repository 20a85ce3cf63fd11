// SPDX-License-Identifier: MIT
// buildReport(): the report's document from a study. The writers render it, one file each
// (reportmarkdown.cpp, reporthtml.cpp, reportjson.cpp, reportcsv.cpp).
#include "core/analysis/report.h"

#include "core/analysis/runtext.h"
#include "core/config/recordedconfig.h"
#include "core/contract/program.h"
#include "core/contract/rowlookup.h"
#include "optlog_version.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace optlog {

namespace {

std::vector<std::pair<std::string, std::string>> environmentRows(const std::vector<ReportRun> &runs, int64_t studySeed,
                                                                 const std::string &createdAt)
{
    // (label, JSON key path) of what reproduction needs.
    const std::vector<std::pair<std::string, std::vector<std::string>>> facts = {{"optlog", {"optlog_version"}},
                                                                                 {"optlog commit", {"optlog_git"}},
                                                                                 {"LibTorch", {"libtorch_version"}},
                                                                                 {"BLAS", {"blas"}},
                                                                                 {"BLAS core type", {"blas_core"}},
                                                                                 {"FP32 products", {"gemm"}},
                                                                                 {"intra-op threads",
                                                                                  {"intra_op_threads"}},
                                                                                 {"BLAS threads", {"blas_threads"}},
                                                                                 {"device", {"device"}},
                                                                                 {"CPU", {"cpu_model"}},
                                                                                 {"logical CPUs", {"logical_cpus"}},
                                                                                 {"CPU flags", {"cpu_flags"}},
                                                                                 {"compiler", {"compiler"}},
                                                                                 {"set by optlog",
                                                                                  {"variables_set_by_optlog"}},
                                                                                 {"runtime settings", {"tuning"}}};
    std::vector<std::pair<std::string, std::string>> rows;
    for (const auto &[label, keys] : facts) {
        std::map<std::string, std::vector<std::string>> byValue;
        for (const auto &run : runs) {
            std::string value = "unknown";
            try {
                const auto env = nlohmann::json::parse(run.summary.run.environmentJson);
                if (env.contains(keys[0]))
                    value = env[keys[0]].is_string() ? env[keys[0]].get<std::string>() : env[keys[0]].dump();
            } catch (const nlohmann::json::exception &) {
            }
            byValue[value].push_back(run.summary.run.name);
        }
        std::string text;
        if (byValue.size() == 1) {
            text = byValue.begin()->first;
        } else {
            for (const auto &[value, names] : byValue) {
                std::string who;
                for (const auto &n : names)
                    who += (who.empty() ? "" : ", ") + n;
                text += (text.empty() ? "" : "; ") + value + " (" + who + ")";
            }
        }
        rows.push_back({label, text});
    }
    std::set<std::string> seeds;
    for (const auto &run : runs)
        if (run.summary.config) // a recorded run's seed is a key of its trainer's, shown in its config
            seeds.insert(std::to_string(run.summary.config->train.seed));
    std::string seedText;
    for (const auto &s : seeds)
        seedText += (seedText.empty() ? "" : ", ") + s;
    rows.push_back({"run seeds (train.seed)", seedText});
    rows.push_back({"study seed (validation set)", std::to_string(studySeed)});
    rows.push_back({"report written", createdAt});
    return rows;
}

} // namespace

namespace {

// Each format's own name first, then its other names.
constexpr Named<ReportFormat> kReportFormatNames[] = {{ReportFormat::Html, "html"},        {ReportFormat::Pdf, "pdf"},
                                                      {ReportFormat::Markdown, "md"},      {ReportFormat::Csv, "csv"},
                                                      {ReportFormat::Json, "json"},        {ReportFormat::Html, "htm"},
                                                      {ReportFormat::Markdown, "markdown"}};

} // namespace

std::optional<ReportFormat> reportFormatNamed(const std::string &name)
{
    std::string lower = name;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return valueNamed(kReportFormatNames, lower);
}

const std::vector<std::string> &reportFormatNames()
{
    static const std::vector<std::string> names = [] {
        std::vector<std::string> own;
        for (const auto &row : kReportFormatNames)
            if (row.name == std::string(nameIn(kReportFormatNames, row.value)))
                own.push_back(row.name);
        return own;
    }();
    return names;
}

bool drawsCharts(ReportFormat format)
{
    return format == ReportFormat::Html || format == ReportFormat::Pdf || format == ReportFormat::Markdown;
}

Report buildReport(const Store &store, const std::vector<std::string> &runs, const std::string &baseline,
                   double tolerance)
{
    if (store.runs().empty())
        throw StoreError("report: " + store.path() + " has no runs to report");
    ComparisonRequest request;
    request.runs = runs;
    request.baseline = baseline;
    request.tolerance = tolerance;
    StudyComparison comparison;
    try {
        comparison = compareStudy(store, request);
    } catch (const StoreError &e) {
        throw StoreError(std::string(e.what()) + "; `" + pasteableCommand({"optlog", "runs", store.path()})
                         + "` lists them");
    }

    Report report;
    const auto slash = store.path().find_last_of('/');
    report.study = slash == std::string::npos ? store.path() : store.path().substr(slash + 1);
    report.baseline = comparison.groups[comparison.baseline].name;
    report.tolerance = tolerance;
    report.createdAt = utcNow();
    report.optlogVersion = std::string(OPTLOG_VERSION) + " (" + OPTLOG_GIT_DESCRIBE + ")";

    // The baseline group leads, then the others in the order asked for.
    std::vector<size_t> order = {comparison.baseline};
    for (size_t i = 0; i < comparison.groups.size(); ++i)
        if (i != comparison.baseline)
            order.push_back(i);
    const GroupSummary &baseGroup = comparison.groups[comparison.baseline];
    // Stored configs, so that a recorded run's own keys are compared too.
    const std::string &baseToml = baseGroup.representative().run.configToml;
    for (size_t g : order) {
        const GroupSummary &group = comparison.groups[g];
        report.groups.push_back(comparison.rows[g]);
        for (const auto &summary : group.replicates) {
            ReportRun run;
            run.summary = summary;
            run.group = group.name;
            run.outcomeText = outcomeText(summary.run, true);
            for (auto &field : compareStoredConfigs({baseToml, summary.run.configToml}))
                if (field.differs && field.path != "name" && field.path != "group")
                    run.changes.push_back(field);
            for (const auto &[state, dtype] : storedDtypes(summary.run))
                run.dtypes.push_back({precisionStateLabel(state), dtype});
            run.memoryLines = memoryByRole(summary.memory);
            run.metrics = store.metrics(summary.run.id);
            run.origin = originText(summary.run, store.path());
            report.runs.push_back(std::move(run));
        }
    }
    report.environment = environmentRows(report.runs, store.studySeed(), report.createdAt);
    return report;
}

} // namespace optlog
