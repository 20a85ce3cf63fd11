// SPDX-License-Identifier: MIT
// The report's sections as plain tables and lines, for this folder's writers only: the Markdown,
// HTML and CSV writers render the same cells in their own markup, so they say the same thing.
#pragma once

#include "core/analysis/report.h"
#include "core/analysis/verdictcells.h"

#include <string>
#include <vector>

namespace optlog::Internal {

// The cells of the report's group `group` (0: the baseline), as verdictcells.h writes them for
// every table.
VerdictCells verdictCells(const Report &report, size_t group);

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
