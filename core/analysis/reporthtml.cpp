// SPDX-License-Identifier: MIT
// reportHtml(): the report as one HTML page for a browser or Qt's PDF writer.
#include "core/analysis/report.h"
#include "core/analysis/reportsections_p.h"

#include <sstream>

namespace optlog {

using namespace Internal;

namespace {

std::string htmlTable(const Table &t, const std::string &cssClass)
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

class HtmlMarkup : public ReportMarkup
{
public:
    explicit HtmlMarkup(std::ostream &out)
        : m_out(out)
    { }

    void title(const std::string &text) override { m_out << "<h1>" << html(text) << "</h1>\n"; }
    void section(const std::string &text) override { m_out << "<h2>" << html(text) << "</h2>\n"; }
    void subsection(const std::string &text) override { m_out << "<h3>" << html(text) << "</h3>\n"; }
    void paragraph(const std::string &text) override { m_out << "<p>" << html(text) << "</p>\n"; }
    void list(const std::vector<std::string> &items) override
    {
        m_out << "<ul>\n";
        for (const auto &item : items)
            m_out << "<li>" << html(item) << "</li>\n";
        m_out << "</ul>\n";
    }
    void table(const Table &t, const std::string &cssClass) override { m_out << htmlTable(t, cssClass); }
    void charts(const std::vector<ReportChart> &charts) override
    {
        m_out << "<div class=\"charts\">\n";
        for (const auto &chart : charts)
            m_out << "<img" << (chart.wide ? " class=\"wide\"" : "") << " src=\"" << html(chart.source) << "\" alt=\""
                  << html(chart.title) << "\" title=\"" << html(chart.title) << "\">\n";
        m_out << "</div>\n";
    }
    void note(const std::string &note) override
    {
        m_out << "<p>Note:</p>\n<pre class=\"note\">" << html(note) << "</pre>\n";
    }

private:
    std::ostream &m_out;
};

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
    HtmlMarkup markup(out);
    writeOutline(report, charts, markup);
    out << "</body></html>\n";
    return out.str();
}

} // namespace optlog
