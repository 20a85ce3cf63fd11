// SPDX-License-Identifier: MIT
#include "core/analysis/report.h"

#include "optlog_version.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

namespace optlog {

namespace {

// A run written by another optlog version is compared as the defaults.
RunConfig configOf(const RunSummary &summary)
{
    return summary.config.value_or(RunConfig{});
}

std::string bytesOrDash(int64_t bytes)
{
    return bytes < 0 ? "-" : formatBytes(bytes);
}

// The verdict table's cells, shared by every writer so that they say the same thing.
struct VerdictCells
{
    std::string run, seeds, outcome, loss, delta, speedup, throughput, mfu, peak, verdict;
};

VerdictCells verdictCells(const Report &report, const ComparisonRow &c, bool isBaseline)
{
    VerdictCells cells;
    cells.run = c.name + (isBaseline ? " (baseline)" : "");
    cells.seeds = std::to_string(c.seeds);
    cells.outcome = c.completed == c.seeds ? "completed"
                                           : formatted("%lld of %lld completed", static_cast<long long>(c.completed),
                                                       static_cast<long long>(c.seeds));
    if (c.seeds == 1)
        for (const auto &r : report.runs)
            if (r.group == c.name)
                cells.outcome = r.outcomeText;
    const bool hasLoss = c.completed > 0 && std::isfinite(c.validationLoss);
    cells.loss = hasLoss ? formatted("%.4f", c.validationLoss) + (c.seeds > 1 ? formatted(" (sd %.4f)", c.validationSd) : "")
                               + " @ " + std::to_string(c.matchedTokens) + " tokens"
                         : "no validation";
    if (!isBaseline && hasLoss)
        cells.delta = c.quality.seedNoiseKnown()
                          ? formatted("%+.4f ± %.4f (Welch 95%%)", c.deltaLoss, c.quality.halfWidth)
                          : formatted("%+.4f (tolerance ±%g)", c.deltaLoss, report.tolerance);
    cells.speedup = isBaseline || c.speedup <= 0 ? "" : formatted("%.2fx", c.speedup);
    if (c.throughput.steps > 0)
        cells.throughput = c.seeds > 1 ? formatted("%.0f (%.0f-%.0f over seeds)", c.tokensPerSecond.median,
                                                   c.tokensPerSecond.min, c.tokensPerSecond.max)
                                       : formatted("%.0f (%.0f-%.0f)", c.throughput.median, c.throughput.p10,
                                                   c.throughput.p90);
    else
        cells.throughput = "-";
    cells.mfu = c.mfu > 0 ? formatted("%.0f%%", 100 * c.mfu) : "-";
    cells.peak = c.peakBytes > 0 ? formatBytes(c.peakBytes) : "-";
    if (c.seeds > 1 && c.peakBytes > 0 && c.peak.max > c.peak.min)
        cells.peak += " (" + formatBytes(int64_t(c.peak.min)) + "-" + formatBytes(int64_t(c.peak.max)) + ")";
    if (!isBaseline && c.peakBytes > 0)
        cells.peak += " " + formatted("%+.0f%%", -100.0 * c.memorySaved);
    cells.verdict = c.verdict;
    if (!isBaseline && c.completed == 0)
        cells.verdict = "did not complete (" + cells.outcome + "); " + c.verdict;
    if (isBaseline) {
        cells.verdict = "baseline";
        if (const std::string unstable = instabilityText(c.instabilities); !unstable.empty())
            cells.verdict += "; " + unstable;
        if (!c.machineNote.empty())
            cells.verdict += "; " + c.machineNote;
    }
    return cells;
}

std::string html(const std::string &text)
{
    std::string out;
    for (char c : text) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        default: out += c;
        }
    }
    return out;
}

// Text from the study (run names, config values, messages) as Markdown shows it and never runs
// it: HTML's own characters as entities, so a name like <script> stays text in any renderer, and
// on one line.
std::string markdownText(const std::string &text)
{
    std::string out = html(text);
    std::replace_if(out.begin(), out.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
    return out;
}

std::string markdownCell(const std::string &text)
{
    std::string out;
    for (char c : markdownText(text))
        out += c == '|' ? std::string("\\|") : std::string(1, c);
    return out;
}

// A generic table the Markdown and HTML writers both render.
struct Table
{
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows;
};

Table verdictTable(const Report &report)
{
    Table t{{"Run", "Seeds", "Outcome", "Val loss at matched tokens", "Δ vs baseline", "Speed-up", "Tokens/s",
             "MFU", "Peak memory", "Verdict"},
            {}};
    for (size_t i = 0; i < report.groups.size(); ++i) {
        const VerdictCells c = verdictCells(report, report.groups[i], i == 0);
        t.rows.push_back({c.run, c.seeds, c.outcome, c.loss, c.delta, c.speedup, c.throughput, c.mfu, c.peak, c.verdict});
    }
    return t;
}

Table dtypeTable(const ReportRun &run)
{
    Table t{{"State", "Dtype"}, {}};
    for (const auto &[name, dtype] : run.dtypes)
        t.rows.push_back({name, dtype});
    return t;
}

Table memoryTable(const ReportRun &run)
{
    Table t{{"Role", "Dtype", "Predicted", "Measured", "Residual"}, {}};
    for (const auto &line : run.memoryLines)
        t.rows.push_back({memoryRoleName(line.role), line.dtype, bytesOrDash(line.predicted), bytesOrDash(line.measured), residualText(line)});
    return t;
}

Table rankTable(const ReportRun &run) { return {rankHeader(), rankRows(run.summary)}; }

// "Data parallel over 2 ranks, ZeRO stage 1 (batch: 2 ranks x microbatch 4 x ...)".
std::string rankIntro(const ReportRun &run)
{
    const auto &config = run.summary.config;
    return "Data parallel over " + std::to_string(run.summary.ranks.size()) + " ranks"
           + (config ? ", ZeRO stage " + std::to_string(config->distributed.zeroStage) + " (batch: "
                           + effectiveBatch(*config) + ")"
                     : std::string())
           + "; each rank's memory measured / predicted:";
}

Table quantizationTable(const ReportRun &run)
{
    return {quantizationHeader(), quantizationRows(run.summary.quantizations)};
}

constexpr const char *kQuantizationIntro =
    "Post-training quantization of the final weights (`optlog quantize`), evaluated in FP32 on the study's "
    "validation windows:";

Table changesTable(const Report &report, const ReportRun &run)
{
    Table t{{"Field", report.baseline, run.summary.run.name}, {}};
    for (const auto &change : run.changes)
        t.rows.push_back({change.path, change.values.at(0), change.values.at(1)});
    return t;
}

// Per group: the instabilities its runs recorded, and what FP16 and BF16 would do to its tensors.
std::vector<std::string> stabilityLines(const Report &report)
{
    std::vector<std::string> lines;
    for (const auto &c : report.groups) {
        const std::string unstable = instabilityText(c.instabilities);
        std::string line = c.name + ": " + (unstable.empty() ? "no instability recorded" : unstable)
                           + formatted(" over %lld seed%s", static_cast<long long>(c.seeds), c.seeds == 1 ? "" : "s");
        if (!c.numerics.empty())
            line += "; numerics " + c.numerics;
        lines.push_back(line + ".");
    }
    return lines;
}

std::string throughputLine(const ReportRun &run)
{
    const ThroughputSummary &t = run.summary.throughput;
    if (t.steps == 0)
        return "No steady-state steps were measured.";
    std::string line = "Steady-state throughput: " + formatted("%.0f", t.median) + " tokens/s median over "
                       + std::to_string(t.steps) + " steps after warm-up (p10 " + formatted("%.0f", t.p10) + ", p90 "
                       + formatted("%.0f", t.p90) + ").";
    const RunSummary &s = run.summary;
    if (s.peakGflops > 0)
        line += " Model FLOPs " + formatted("%.1f", s.flopsPerToken / 1e6) + " M per token: "
                + formatted("%.1f", s.achievedGflops) + " GFLOP/s achieved, MFU " + formatted("%.0f%%", 100 * s.mfu())
                + " of the " + formatted("%.1f", s.peakGflops) + " GFLOP/s " + s.peakDtype
                + " matmul peak measured on this machine.";
    if (s.machine.probes > 0)
        line += " Machine-speed index (reference matmul, " + std::to_string(s.machine.probes) + " timings): median "
                + formatted("%.1f", s.machine.medianGflops) + " GFLOP/s, varied by "
                + formatted("%.0f%%", 100 * s.machine.variation) + "."
                + (s.machine.flagged() ? " Flagged: " + s.machine.describe() + "." : "");
    if (s.untunedSettings)
        line += " Ran with untuned runtime settings: optlog tune had not measured this machine and precision.";
    return line;
}

// The header, then each row, as `writeRow(cells, isHeader)` writes a row in a writer's markup.
template<typename WriteRow>
std::string eachRow(const Table &t, WriteRow writeRow)
{
    std::string out = writeRow(t.header, true);
    for (const auto &row : t.rows)
        out += writeRow(row, false);
    return out;
}

std::string markdownTable(const Table &t)
{
    return eachRow(t, [](const std::vector<std::string> &cells, bool isHeader) {
        std::string line = "|";
        for (const auto &cell : cells)
            line += " " + markdownCell(cell) + " |";
        line += "\n";
        if (isHeader) {
            line += "|";
            for (size_t i = 0; i < cells.size(); ++i)
                line += "---|";
            line += "\n";
        }
        return line;
    });
}

std::string htmlTable(const Table &t, const std::string &cssClass = "")
{
    const std::string rows = eachRow(t, [](const std::vector<std::string> &cells, bool isHeader) {
        const std::string tag = isHeader ? "th" : "td";
        std::string line = "<tr>";
        for (const auto &cell : cells)
            line += "<" + tag + ">" + html(cell) + "</" + tag + ">";
        return line + "</tr>\n";
    });
    return "<table" + (cssClass.empty() ? "" : " class=\"" + cssClass + "\"")
           + " border=\"1\" cellspacing=\"0\" cellpadding=\"4\">\n" + rows + "</table>\n";
}

std::string question(const Report &report)
{
    return "Which memory and precision technique to use: " + std::to_string(report.groups.size() - 1)
           + " technique(s) judged against " + report.baseline + ", each over its seeds: validation loss compared at "
           + "matched tokens seen (the difference of means with Welch's 95% interval where both sides have two seeds "
           + "or more; same quality when it lies within ±" + formatted("%g", report.tolerance) + " nats per token), "
           + "throughput as the median over seeds of each run's steady-state median, peak memory over complete "
           + "steps after warm-up.";
}

std::vector<std::pair<std::string, std::string>> environmentRows(const std::vector<ReportRun> &runs, int64_t studySeed,
                                                                 const std::string &createdAt)
{
    // (label, JSON key path) of what reproduction needs.
    const std::vector<std::pair<std::string, std::vector<std::string>>> facts = {
        {"optlog", {"optlog_version"}},        {"optlog commit", {"optlog_git"}},
        {"LibTorch", {"libtorch_version"}},    {"BLAS", {"blas"}},
        {"BLAS core type", {"blas_core"}},     {"FP32 products", {"gemm"}},
        {"intra-op threads", {"intra_op_threads"}},
        {"BLAS threads", {"blas_threads"}},    {"device", {"device"}},
        {"CPU", {"cpu_model"}},                {"logical CPUs", {"logical_cpus"}},
        {"CPU flags", {"cpu_flags"}},          {"compiler", {"compiler"}},
        {"set by optlog", {"variables_set_by_optlog"}}, {"runtime settings", {"tuning"}}};
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
        seeds.insert(std::to_string(configOf(run.summary).train.seed));
    std::string seedText;
    for (const auto &s : seeds)
        seedText += (seedText.empty() ? "" : ", ") + s;
    rows.push_back({"run seeds (train.seed)", seedText});
    rows.push_back({"study seed (validation set)", std::to_string(studySeed)});
    rows.push_back({"report written", createdAt});
    return rows;
}

} // namespace

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
        throw StoreError(std::string(e.what()) + "; `optlog runs " + store.path() + "` lists them");
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
    const RunConfig baseConfig = configOf(baseGroup.replicates.front());
    for (size_t g : order) {
        const GroupSummary &group = comparison.groups[g];
        report.groups.push_back(comparison.rows[g]);
        for (const auto &summary : group.replicates) {
            ReportRun run;
            run.summary = summary;
            run.group = group.name;
            run.outcomeText = outcomeText(summary.run, true);
            for (auto &field : compareConfigs({baseConfig, configOf(summary)}))
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

namespace {

// The user's words about a run, each a line: its tags, former names and where its config came from.
std::vector<std::string> curationLines(const ReportRun &run)
{
    const RunRecord &record = run.summary.run;
    std::vector<std::string> lines;
    if (!record.tags.empty())
        lines.push_back("Tags: " + tagsText(record) + ".");
    if (!record.formerNames.empty()) {
        std::string names;
        for (const auto &name : record.formerNames)
            names += (names.empty() ? "" : ", ") + name;
        lines.push_back("Formerly named: " + names + ".");
    }
    if (!run.origin.empty())
        lines.push_back("Config " + run.origin + ".");
    return lines;
}

// A note as a Markdown indented code block: shown as the user wrote it, never read as Markdown or HTML.
std::string markdownNote(const std::string &note)
{
    std::string out = "Note:\n\n";
    for (const auto &line : splitLines(note))
        out += "    " + line + "\n";
    return out + "\n";
}

} // namespace

std::string reportMarkdown(const Report &report, const std::vector<ReportChart> &charts)
{
    std::ostringstream out;
    out << "# optlog report: " << markdownText(report.study) << "\n\n";
    out << markdownText(question(report)) << "\n\n## Verdicts\n\n" << markdownTable(verdictTable(report)) << "\n";
    out << "## Stability and 16-bit numerics\n\n";
    for (const auto &line : stabilityLines(report))
        out << "- " << markdownText(line) << "\n";
    out << "\n";
    if (!charts.empty()) {
        out << "## Charts\n\n";
        for (const auto &chart : charts)
            out << "### " << chart.title << "\n\n![" << chart.title << "](" << chart.source << ")\n\n";
    }
    out << "## Runs\n\n";
    for (size_t i = 0; i < report.runs.size(); ++i) {
        const ReportRun &run = report.runs[i];
        out << "### " << markdownText(run.summary.run.name) << (run.group == report.baseline ? " (baseline)" : "") << "\n\n";
        out << "Outcome: " << markdownText(run.outcomeText) << ". " << markdownText(throughputLine(run)) << "\n\n";
        for (const auto &line : curationLines(run))
            out << markdownText(line) << "\n\n";
        if (!run.summary.run.note.empty())
            out << markdownNote(run.summary.run.note);
        if (i > 0)
            out << (run.changes.empty() ? "Same config as the baseline.\n\n"
                                        : "Config that differs from the baseline:\n\n" + markdownTable(changesTable(report, run)) + "\n");
        if (!run.dtypes.empty())
            out << "Dtypes, read from the run's tensors:\n\n" << markdownTable(dtypeTable(run)) << "\n";
        out << "Memory by role (residual = measured against predicted):\n\n" << markdownTable(memoryTable(run)) << "\n";
        if (!run.summary.ranks.empty())
            out << markdownText(rankIntro(run)) << "\n\n" << markdownTable(rankTable(run)) << "\n";
        if (!run.summary.quantizations.empty())
            out << markdownText(kQuantizationIntro) << "\n\n" << markdownTable(quantizationTable(run)) << "\n"
                << markdownText(quantizationUntouched()) << "\n\n";
    }
    out << "## Environment\n\n" << markdownTable(Table{{"", "value"}, [&] {
        std::vector<std::vector<std::string>> rows;
        for (const auto &[k, v] : report.environment)
            rows.push_back({k, v});
        return rows;
    }()}) << "\n";
    out << "Written by optlog " << report.optlogVersion << " on " << report.createdAt << ".\n";
    return out.str();
}

std::string reportHtml(const Report &report, const std::vector<ReportChart> &charts)
{
    std::ostringstream out;
    out << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n<title>optlog report: " << html(report.study)
        << "</title>\n<style>\n"
           "body { font-family: 'DejaVu Sans', sans-serif; font-size: 10pt; margin: 2em; color: #222; }\n"
           "h1 { font-size: 16pt; } h2 { font-size: 13pt; margin-top: 1.5em; } h3 { font-size: 11pt; }\n"
           "table { border-collapse: collapse; margin: 0.5em 0 1em 0; }\n"
           "th, td { border: 1px solid #bbb; padding: 3px 6px; text-align: left; vertical-align: top; }\n"
           "th { background: #eef2f7; }\n"
           "img { max-width: 100%; }\n"
           ".charts img { width: 48%; margin: 0.5%; }\n"
           ".charts img.wide { width: 97%; }\n"
           "pre.note { white-space: pre-wrap; font-family: 'DejaVu Sans', sans-serif; background: #f6f7f9; "
           "padding: 6px; border-left: 3px solid #bbb; }\n"
           "</style></head><body>\n";
    out << "<h1>optlog report: " << html(report.study) << "</h1>\n<p>" << html(question(report)) << "</p>\n";
    out << "<h2>Verdicts</h2>\n" << htmlTable(verdictTable(report), "verdicts");
    out << "<h2>Stability and 16-bit numerics</h2>\n<ul>\n";
    for (const auto &line : stabilityLines(report))
        out << "<li>" << html(line) << "</li>\n";
    out << "</ul>\n";
    if (!charts.empty()) {
        out << "<h2>Charts</h2>\n<div class=\"charts\">\n";
        for (const auto &chart : charts)
            out << "<img" << (chart.wide ? " class=\"wide\"" : "") << " src=\"" << html(chart.source) << "\" alt=\"" << html(chart.title) << "\" title=\""
                << html(chart.title) << "\">\n";
        out << "</div>\n";
    }
    out << "<h2>Runs</h2>\n";
    for (size_t i = 0; i < report.runs.size(); ++i) {
        const ReportRun &run = report.runs[i];
        out << "<h3>" << html(run.summary.run.name) << (run.group == report.baseline ? " (baseline)" : "") << "</h3>\n";
        out << "<p>Outcome: " << html(run.outcomeText) << ". " << html(throughputLine(run)) << "</p>\n";
        for (const auto &line : curationLines(run))
            out << "<p>" << html(line) << "</p>\n";
        if (!run.summary.run.note.empty())
            out << "<p>Note:</p>\n<pre class=\"note\">" << html(run.summary.run.note) << "</pre>\n";
        if (i > 0) {
            if (run.changes.empty())
                out << "<p>Same config as the baseline.</p>\n";
            else
                out << "<p>Config that differs from the baseline:</p>\n" << htmlTable(changesTable(report, run));
        }
        if (!run.dtypes.empty())
            out << "<p>Dtypes, read from the run's tensors:</p>\n" << htmlTable(dtypeTable(run));
        out << "<p>Memory by role (residual = measured against predicted):</p>\n" << htmlTable(memoryTable(run));
        if (!run.summary.ranks.empty())
            out << "<p>" << html(rankIntro(run)) << "</p>\n" << htmlTable(rankTable(run));
        if (!run.summary.quantizations.empty())
            out << "<p>" << html(kQuantizationIntro) << "</p>\n" << htmlTable(quantizationTable(run)) << "<p>"
                << html(quantizationUntouched()) << "</p>\n";
    }
    Table environment{{"", "value"}, {}};
    for (const auto &[k, v] : report.environment)
        environment.rows.push_back({k, v});
    out << "<h2>Environment</h2>\n" << htmlTable(environment);
    out << "<p>Written by optlog " << html(report.optlogVersion) << " on " << html(report.createdAt) << ".</p>\n";
    out << "</body></html>\n";
    return out.str();
}

std::string reportJson(const Report &report)
{
    const auto finite = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
    nlohmann::json groups = nlohmann::json::array();
    for (size_t i = 0; i < report.groups.size(); ++i) {
        const ComparisonRow &c = report.groups[i];
        nlohmann::json instabilities = nlohmann::json::object();
        for (const auto &[kind, count] : c.instabilities)
            instabilities[eventKindName(kind)] = count;
        groups.push_back({{"name", c.name},
                          {"baseline", i == 0},
                          {"seeds", c.seeds},
                          {"completed", c.completed},
                          {"outcome", outcomeName(c.outcome)},
                          {"matched_tokens", c.matchedTokens},
                          {"validation_loss", {{"mean", finite(c.validationLoss)}, {"sd_over_seeds", c.validationSd},
                                               {"sampling_error", finite(c.samplingError)}}},
                          {"delta_loss", {{"difference", finite(c.deltaLoss)},
                                          {"half_width_95", finite(c.quality.halfWidth)},
                                          {"interval", c.quality.seedNoiseKnown() ? "welch" : "none: one seed on a side"}}},
                          {"tolerance", report.tolerance},
                          {"speedup", c.speedup},
                          {"tokens_per_second", {{"median", c.tokensPerSecond.median}, {"min", c.tokensPerSecond.min},
                                                 {"max", c.tokensPerSecond.max}}},
                          {"mfu", c.mfu},
                          {"peak_bytes", {{"median", c.peakBytes}, {"min", int64_t(c.peak.min)}, {"max", int64_t(c.peak.max)}}},
                          {"memory_saved", c.memorySaved},
                          {"instabilities", instabilities},
                          {"numerics", c.numerics},
                          {"verdict", i == 0 ? std::string("baseline") : c.verdict}});
    }
    nlohmann::json runs = nlohmann::json::array();
    for (const auto &r : report.runs) {
        nlohmann::json changes = nlohmann::json::object();
        for (const auto &change : r.changes)
            changes[change.path] = {{"baseline", change.values.at(0)}, {"run", change.values.at(1)}};
        nlohmann::json dtypes = nlohmann::json::object();
        for (const auto &[name, dtype] : r.dtypes)
            dtypes[name] = dtype;
        nlohmann::json memory = nlohmann::json::array();
        for (const auto &line : r.memoryLines)
            memory.push_back({{"role", memoryRoleName(line.role)}, {"dtype", line.dtype}, {"predicted_bytes", line.predicted},
                              {"measured_bytes", line.measured}});
        nlohmann::json metrics = nlohmann::json::array();
        for (const auto &m : r.metrics) {
            metrics.push_back({{"step", m.step}, {"tokens", m.tokens}, {"train_loss", m.trainLoss},
                               {"tokens_per_second", m.tokensPerSecond}, {"step_seconds", m.stepSeconds}});
            if (m.communicationSeconds)
                metrics.back()["communication_seconds"] = *m.communicationSeconds;
        }
        nlohmann::json validation = nlohmann::json::array();
        for (const auto &v : r.summary.validation)
            validation.push_back({{"step", v.step}, {"tokens", v.tokens}, {"loss", v.loss},
                                  {"sampling_error", finite(v.samplingError())}});
        const RunSummary &s = r.summary;
        nlohmann::json quantizations = nlohmann::json::array();
        for (const QuantizationResult &q : s.quantizations) {
            nlohmann::json sensitivity = nlohmann::json::array();
            for (const TensorSensitivity &t : q.sensitivity)
                sensitivity.push_back({{"tensor", t.tensor}, {"loss_delta", finite(t.lossDelta)}});
            quantizations.push_back({{"scheme", q.scheme},
                                     {"group_size", q.groupSize},
                                     {"tensors", q.tensors},
                                     {"int8_tensors", q.int8Tensors},
                                     {"bits_per_weight", q.bitsPerWeight()},
                                     {"quantized_weights", q.quantizedWeights},
                                     {"total_weights", q.totalWeights},
                                     {"bytes", {{"codes", q.codeBytes}, {"scales", q.scaleBytes},
                                                {"zero_points", q.zeroPointBytes}, {"floating_point", q.floatBytes},
                                                {"floating_point_dtype", q.floatDtype}, {"weights", q.weightBytes()},
                                                {"dequantization_workspace", q.workspaceBytes},
                                                {"activations", q.activationBytes},
                                                {"inference_bill", q.inferenceBytes()}}},
                                     {"validation_loss", finite(q.loss)},
                                     {"unquantized_validation_loss", finite(q.baseLoss)},
                                     {"delta_loss", finite(q.lossDelta())},
                                     {"kl_nats", finite(q.kl)},
                                     {"top1_agreement", finite(q.top1Agreement)},
                                     {"sensitivity", sensitivity}});
        }
        nlohmann::json ranks = nlohmann::json::array();
        for (const RankRecord &rank : s.ranks) {
            nlohmann::json memoryOfRank = nlohmann::json::array();
            const auto found = s.rankMemory.find(rank.rank);
            if (found != s.rankMemory.end())
                for (const MemoryRow &row : found->second)
                    memoryOfRank.push_back({{"role", memoryRoleName(row.role)}, {"source", memorySourceName(row.source)},
                                            {"dtype", row.dtype}, {"bytes", row.bytes}});
            ranks.push_back({{"rank", rank.rank}, {"host", rank.host}, {"pid", rank.pid}, {"outcome", rank.outcome},
                             {"message", rank.message}, {"measured_steps", rank.measuredSteps},
                             {"step_seconds", rank.stepSeconds}, {"communication_seconds", rank.communicationSeconds},
                             {"memory", memoryOfRank}});
        }
        runs.push_back({{"name", s.run.name},
                        {"group", r.group},
                        {"note", s.run.note},
                        {"tags", s.run.tags},
                        {"former_names", s.run.formerNames},
                        {"derived_from", r.origin},
                        {"outcome", outcomeName(s.run.outcome)},
                        {"outcome_text", r.outcomeText},
                        {"tokens_per_second", {{"median", s.throughput.median}, {"p10", s.throughput.p10},
                                               {"p90", s.throughput.p90}, {"steps", s.throughput.steps}}},
                        {"mfu", s.mfu()},
                        {"achieved_gflops", s.achievedGflops},
                        {"matmul_peak_gflops", s.peakGflops},
                        {"machine_index", {{"median_gflops", s.machine.medianGflops},
                                           {"variation", s.machine.variation},
                                           {"flagged", s.machine.flagged()},
                                           {"normalised_tokens_per_second", s.machine.normalisedMedian}}},
                        {"peak_bytes", s.peakBytes},
                        {"batch", s.config ? effectiveBatch(*s.config) : ""},
                        {"ranks", ranks},
                        {"config_changes", changes},
                        {"dtypes", dtypes},
                        {"memory", memory},
                        {"quantizations", quantizations},
                        {"quantizations_leave_untouched", s.quantizations.empty() ? "" : quantizationUntouched()},
                        {"validation", validation},
                        {"metrics", metrics}});
    }
    nlohmann::json environment = nlohmann::json::object();
    for (const auto &[k, v] : report.environment)
        environment[k] = v;
    return nlohmann::json{{"study", report.study},     {"baseline", report.baseline},
                          {"tolerance", report.tolerance}, {"created_at", report.createdAt},
                          {"optlog", report.optlogVersion}, {"groups", groups}, {"runs", runs},
                          {"environment", environment}}
        .dump(2);
}

namespace {

// A group's tags (each once) and its runs' notes (each after its run's name when the group has
// several), for the one line a group has in the summary CSV.
std::string groupTags(const Report &report, const std::string &group)
{
    std::vector<std::string> tags;
    for (const auto &r : report.runs)
        if (r.group == group)
            for (const auto &tag : r.summary.run.tags)
                if (std::find(tags.begin(), tags.end(), tag) == tags.end())
                    tags.push_back(tag);
    std::string out;
    for (const auto &tag : tags)
        out += (out.empty() ? "" : " ") + tag;
    return out;
}

std::string groupNotes(const Report &report, const std::string &group)
{
    std::vector<const ReportRun *> runs;
    for (const auto &r : report.runs)
        if (r.group == group && !r.summary.run.note.empty())
            runs.push_back(&r);
    std::string out;
    for (const ReportRun *r : runs)
        out += (out.empty() ? "" : "\n") + (runs.size() > 1 ? r->summary.run.name + ": " : "") + r->summary.run.note;
    return out;
}

// A group's quantizations, one short entry each: "int4 g64: 5.21 bits/weight, Δ loss +0.00030".
std::string groupQuantizations(const Report &report, const std::string &group)
{
    std::string out;
    for (const auto &r : report.runs)
        if (r.group == group)
            for (const QuantizationResult &q : r.summary.quantizations)
                out += (out.empty() ? "" : "; ") + quantizationLabel(q)
                       + formatted(": %.2f bits/weight, Δ loss %+.5f", q.bitsPerWeight(), q.lossDelta());
    return out;
}

} // namespace

std::string reportSummaryCsv(const Report &report)
{
    std::ostringstream out;
    out << "run,baseline,seeds,completed,outcome,matched_tokens,validation_loss,validation_sd,delta_loss,delta_half_width_95,"
           "tolerance,tokens_per_second_median,tokens_per_second_min,tokens_per_second_max,speedup,mfu,peak_bytes,"
           "memory_saved,verdict,tags,notes,quantizations\n";
    for (size_t i = 0; i < report.groups.size(); ++i) {
        const ComparisonRow &c = report.groups[i];
        out << csvField(c.name) << "," << (i == 0 ? "true" : "false") << "," << c.seeds << "," << c.completed << ","
            << csvField(verdictCells(report, c, i == 0).outcome) << "," << c.matchedTokens << "," << c.validationLoss << "," << c.validationSd << "," << c.deltaLoss << ","
            << c.quality.halfWidth << "," << report.tolerance << "," << c.tokensPerSecond.median << ","
            << c.tokensPerSecond.min << "," << c.tokensPerSecond.max << "," << c.speedup << "," << c.mfu << ","
            << c.peakBytes << "," << c.memorySaved << "," << csvField(i == 0 ? "baseline" : c.verdict) << ","
            << csvField(groupTags(report, c.name)) << "," << csvField(groupNotes(report, c.name)) << ","
            << csvField(groupQuantizations(report, c.name)) << "\n";
    }
    return out.str();
}

std::string reportMetricsCsv(const Report &report)
{
    std::ostringstream out;
    out << "run,step,tokens,train_loss,learning_rate,grad_norm,step_seconds,tokens_per_second,loss_scale,skipped,"
           "machine_gflops,communication_seconds\n";
    for (const auto &r : report.runs)
        for (const auto &m : r.metrics) {
            out << csvField(r.summary.run.name) << "," << m.step << "," << m.tokens << "," << m.trainLoss << ","
                << m.learningRate << "," << m.gradNorm << "," << m.stepSeconds << "," << m.tokensPerSecond << ","
                << m.lossScale << "," << (m.skipped ? 1 : 0) << "," << m.machineGflops << ",";
            if (m.communicationSeconds) // empty: one rank, no collectives
                out << *m.communicationSeconds;
            out << "\n";
        }
    return out.str();
}

} // namespace optlog
