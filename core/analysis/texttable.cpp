// SPDX-License-Identifier: MIT
#include "core/analysis/texttable.h"

#include <algorithm>
#include <sstream>

namespace optlog {

namespace {

bool continuationByte(char c)
{
    return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

std::string padded(const std::string &text, size_t width, TextTable::Align align)
{
    const size_t shown = displayWidth(text);
    const std::string pad(width > shown ? width - shown : 0, ' ');
    return align == TextTable::Align::Left ? text + pad : pad + text;
}

} // namespace

size_t displayWidth(const std::string &text)
{
    return size_t(std::count_if(text.begin(), text.end(), [](char c) { return !continuationByte(c); }));
}

std::string elided(const std::string &text, size_t width)
{
    if (displayWidth(text) <= width)
        return text;
    if (width == 0)
        return "";
    std::string out;
    size_t shown = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        if (!continuationByte(text[i]) && ++shown == width)
            break;
        out += text[i];
    }
    return out + "~";
}

std::string wrapped(const std::string &text, size_t width, const std::string &indent)
{
    std::istringstream words(text);
    std::string word, out, line;
    const auto flush = [&] {
        out += (out.empty() ? "" : "\n" + indent) + line;
        line.clear();
    };
    while (words >> word) {
        const size_t room = width - (out.empty() ? 0 : displayWidth(indent));
        if (!line.empty() && displayWidth(line) + 1 + displayWidth(word) > room)
            flush();
        line += (line.empty() ? "" : " ") + word;
    }
    if (!line.empty() || out.empty())
        flush();
    return out + "\n";
}

TextTable::TextTable(std::vector<Column> columns)
    : m_columns(std::move(columns))
{ }

void TextTable::addRow(std::vector<std::string> cells)
{
    cells.resize(m_columns.size());
    m_rows.push_back(std::move(cells));
}

std::string TextTable::render(size_t width) const
{
    std::vector<size_t> widths;
    for (const Column &column : m_columns)
        widths.push_back(displayWidth(column.title));
    for (const auto &row : m_rows)
        for (size_t c = 0; c < row.size(); ++c)
            widths[c] = std::max(widths[c], displayWidth(row[c]));
    size_t total = 2 * (widths.size() - 1);
    for (size_t w : widths)
        total += w;
    // The name gives way: the numbers beside it are what the table is for.
    if (total > width && !widths.empty())
        widths[0] -= std::min(widths[0] - std::min<size_t>(widths[0], 8), total - width);
    const auto line = [&](const std::vector<std::string> &cells) {
        std::string out;
        for (size_t c = 0; c < cells.size(); ++c) {
            const bool last = c + 1 == cells.size();
            std::string cell = padded(elided(cells[c], widths[c]), widths[c], m_columns[c].align);
            if (last && m_columns[c].align == Align::Left)
                cell = elided(cells[c], widths[c]); // no trailing spaces
            out += (c ? "  " : "") + cell;
        }
        return out + "\n";
    };
    std::vector<std::string> titles;
    for (const Column &column : m_columns)
        titles.push_back(column.title);
    std::string out = line(titles);
    for (const auto &row : m_rows)
        out += line(row);
    return out;
}

} // namespace optlog
