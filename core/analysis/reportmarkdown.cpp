// SPDX-License-Identifier: MIT
// reportMarkdown(): the report as Markdown, its charts as images beside it.
#include "core/analysis/report.h"
#include "core/analysis/reportsections_p.h"

#include <algorithm>
#include <sstream>

namespace optlog {

using namespace Internal;

namespace {

// Text from the study (run names, config values, messages) as Markdown shows it and never runs
// it: HTML's own characters as entities, so a name like <script> stays text in any renderer, and
// on one line.
std::string markdownText(const std::string &text)
{
    std::string out = html(text);
    std::replace_if(
        out.begin(), out.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
    return out;
}

std::string markdownCell(const std::string &text)
{
    std::string out;
    for (char c : markdownText(text))
        out += c == '|' ? std::string("\\|") : std::string(1, c);
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
        out << "### " << markdownText(run.summary.run.name) << (run.group == report.baseline ? " (baseline)" : "")
            << "\n\n";
        out << "Outcome: " << markdownText(run.outcomeText) << ". " << markdownText(throughputLine(run)) << "\n\n";
        for (const auto &line : curationLines(run))
            out << markdownText(line) << "\n\n";
        if (!run.summary.run.note.empty())
            out << markdownNote(run.summary.run.note);
        if (i > 0)
            out << (run.changes.empty() ? "Same config as the baseline.\n\n"
                                        : "Config that differs from the baseline:\n\n"
                                              + markdownTable(changesTable(report, run)) + "\n");
        if (!run.dtypes.empty())
            out << "Dtypes, read from the run's tensors:\n\n" << markdownTable(dtypeTable(run)) << "\n";
        out << "Memory by role (residual = measured against predicted):\n\n" << markdownTable(memoryTable(run)) << "\n";
        if (!run.summary.ranks.empty())
            out << markdownText(rankIntro(run)) << "\n\n" << markdownTable(rankTable(run)) << "\n";
        if (!run.summary.quantizations.empty())
            out << markdownText(kQuantizationIntro) << "\n\n"
                << markdownTable(quantizationTable(run)) << "\n"
                << markdownText(quantizationUntouched()) << "\n\n";
    }
    out << "## Environment\n\n" << markdownTable(environmentTable(report)) << "\n";
    out << "Written by optlog " << report.optlogVersion << " on " << report.createdAt << ".\n";
    return out.str();
}

} // namespace optlog
