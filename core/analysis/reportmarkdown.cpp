// SPDX-License-Identifier: MIT
// reportMarkdown(): the report as Markdown, its charts as images beside it.
#include "core/analysis/report.h"
#include "core/analysis/reportsections_p.h"
#include "core/contract/format.h"

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

class MarkdownMarkup : public ReportMarkup
{
public:
    std::ostringstream out;

    void title(const std::string &text) override { out << "# " << markdownText(text) << "\n\n"; }
    void section(const std::string &text) override { out << "## " << markdownText(text) << "\n\n"; }
    void subsection(const std::string &text) override { out << "### " << markdownText(text) << "\n\n"; }
    void paragraph(const std::string &text) override { out << markdownText(text) << "\n\n"; }
    void list(const std::vector<std::string> &items) override
    {
        for (const auto &item : items)
            out << "- " << markdownText(item) << "\n";
        out << "\n";
    }
    void table(const Table &t, const std::string &) override { out << markdownTable(t) << "\n"; }
    void charts(const std::vector<ReportChart> &charts) override
    {
        for (const auto &chart : charts)
            out << "### " << chart.title << "\n\n![" << chart.title << "](" << chart.source << ")\n\n";
    }
    void note(const std::string &note) override { out << markdownNote(note); }
};

} // namespace

std::string reportMarkdown(const Report &report, const std::vector<ReportChart> &charts)
{
    MarkdownMarkup markup;
    writeOutline(report, charts, markup);
    return markup.out.str();
}

} // namespace optlog
