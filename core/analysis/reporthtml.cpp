// SPDX-License-Identifier: MIT
// reportHtml(): the report as one HTML page for a browser or Qt's PDF writer.
#include "core/analysis/report.h"
#include "core/analysis/reportsections_p.h"

#include <sstream>

namespace optlog {

using namespace Internal;

namespace {

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

} // namespace

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
            out << "<img" << (chart.wide ? " class=\"wide\"" : "") << " src=\"" << html(chart.source) << "\" alt=\""
                << html(chart.title) << "\" title=\"" << html(chart.title) << "\">\n";
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
            out << "<p>" << html(kQuantizationIntro) << "</p>\n"
                << htmlTable(quantizationTable(run)) << "<p>" << html(quantizationUntouched()) << "</p>\n";
    }
    out << "<h2>Environment</h2>\n" << htmlTable(environmentTable(report));
    out << "<p>Written by optlog " << html(report.optlogVersion) << " on " << html(report.createdAt) << ".</p>\n";
    out << "</body></html>\n";
    return out.str();
}

} // namespace optlog
