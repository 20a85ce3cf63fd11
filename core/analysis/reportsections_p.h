// SPDX-License-Identifier: MIT
// The report's sections as plain tables and lines, for this folder's writers only: the Markdown,
// HTML and CSV writers render the same cells in their own markup, so they say the same thing.
#pragma once

#include "core/analysis/report.h"
#include "core/analysis/verdictcells.h"

#include <string>
#include <vector>

namespace optlog::Internal {

// HTML's own characters as entities; Markdown uses it too, so that study text is never markup.
std::string html(const std::string &text);

// A generic table the Markdown and HTML writers both render.
struct Table
{
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows;
};

Table verdictTable(const Report &report);
Table dtypeTable(const ReportRun &run);
Table memoryTable(const ReportRun &run);
Table rankTable(const ReportRun &run);
// "Data parallel over 2 ranks, ZeRO stage 1 (batch: 2 ranks x microbatch 4 x ...)".
std::string rankIntro(const ReportRun &run);
Table quantizationTable(const ReportRun &run);
Table changesTable(const Report &report, const ReportRun &run);
Table environmentTable(const Report &report);

inline constexpr const char *kQuantizationIntro
    = "Post-training quantization of the final weights (`optlog quantize`), evaluated in FP32 on the study's "
      "validation windows:";

// Per group: the instabilities its runs recorded, and what FP16 and BF16 would do to its tensors.
std::vector<std::string> stabilityLines(const Report &report);
std::string throughputLine(const ReportRun &run);
std::string question(const Report &report);
// The user's words about a run, each a line: its tags, former names and where its config came from.
std::vector<std::string> curationLines(const ReportRun &run);

// How a writer marks up each kind of block the report is made of; writeOutline() decides which
// blocks, in what order, once for every format.
class ReportMarkup
{
public:
    virtual ~ReportMarkup() = default;
    virtual void title(const std::string &text) = 0;
    virtual void section(const std::string &text) = 0;
    virtual void subsection(const std::string &text) = 0;
    virtual void paragraph(const std::string &text) = 0;
    virtual void list(const std::vector<std::string> &items) = 0;
    // `cssClass`: what the table is, for a format that styles it ("verdicts").
    virtual void table(const Table &t, const std::string &cssClass = "") = 0;
    virtual void charts(const std::vector<ReportChart> &charts) = 0;
    virtual void note(const std::string &note) = 0; // the user's own text, shown as written
};

// The report's outline: the question, the verdicts, stability, the charts, each run (outcome,
// curation, note, config changes, dtypes, memory, ranks, quantizations), the environment.
void writeOutline(const Report &report, const std::vector<ReportChart> &charts, ReportMarkup &markup);

// The header, then each row, as `writeRow(cells, isHeader)` writes a row in a writer's markup.
template<typename WriteRow>
std::string eachRow(const Table &t, WriteRow writeRow)
{
    std::string out = writeRow(t.header, true);
    for (const auto &row : t.rows)
        out += writeRow(row, false);
    return out;
}

} // namespace optlog::Internal
