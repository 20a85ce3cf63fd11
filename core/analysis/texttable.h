// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <vector>

namespace optlog {

// Columns of a terminal's width: `optlog study` and `optlog compare` print within 120 columns,
// where a table wider than the terminal wraps into unreadable lines.
inline constexpr size_t kTerminalColumns = 120;

// Characters a terminal shows for UTF-8 `text` (code points, every one a column: "Δ", "±", "–").
size_t displayWidth(const std::string &text);
// `text` cut to `width` columns, its last one "~" when cut, never inside a character.
std::string elided(const std::string &text, size_t width);
// `text` broken at spaces into lines of at most `width` columns, each but the first after
// `indent`; a word longer than a line is left whole on a line of its own.
std::string wrapped(const std::string &text, size_t width = kTerminalColumns, const std::string &indent = "");

// A plain text table: every column as wide as its widest cell, two spaces between columns, and
// the first column (a run's name) elided where the whole would be wider than `width`.
class TextTable
{
public:
    enum class Align { Left, Right };
    struct Column
    {
        std::string title;
        Align align = Align::Left;
    };
    explicit TextTable(std::vector<Column> columns);
    void addRow(std::vector<std::string> cells); // one per column
    std::string render(size_t width = kTerminalColumns) const;

private:
    std::vector<Column> m_columns;
    std::vector<std::vector<std::string>> m_rows;
};

} // namespace optlog
