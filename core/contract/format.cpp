// SPDX-License-Identifier: MIT
#include "core/contract/format.h"

#include <cmath>
#include <cstdarg>
#include <cstdio>

namespace optlog {

std::string formatBytes(int64_t bytes)
{
    char text[32];
    const int64_t size = bytes < 0 ? -bytes : bytes;
    if (size >= (int64_t(1) << 30))
        std::snprintf(text, sizeof(text), "%.2f GiB", double(bytes) / double(int64_t(1) << 30));
    else if (size >= (int64_t(1) << 20) || size == 0)
        std::snprintf(text, sizeof(text), "%.1f MiB", double(bytes) / double(1 << 20));
    else if (size >= 1024)
        std::snprintf(text, sizeof(text), "%.1f KiB", double(bytes) / 1024.0);
    else // a tiny budget or request must not read as "0.0 MiB"
        std::snprintf(text, sizeof(text), "%lld B", static_cast<long long>(bytes));
    return text;
}

std::string percent(double fraction)
{
    return formatted("%.0f%%", std::fabs(fraction) * 100);
}

std::string formatted(const char *format, ...)
{
    va_list arguments, again;
    va_start(arguments, format);
    va_copy(again, arguments);
    const int length = std::vsnprintf(nullptr, 0, format, arguments);
    va_end(arguments);
    std::string text(length > 0 ? size_t(length) + 1 : 1, '\0');
    if (length > 0)
        std::vsnprintf(text.data(), text.size(), format, again);
    va_end(again);
    text.resize(length > 0 ? size_t(length) : 0);
    return text;
}

namespace {

// One character of UTF-8 text: its code point and length in bytes; code point -1 when the bytes
// at `at` are not well-formed UTF-8 (the length is then 1).
struct Utf8Character
{
    int32_t codePoint = -1;
    size_t length = 1;
};

Utf8Character decodeUtf8(const std::string &text, size_t at)
{
    const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
    const unsigned char lead = byte(at);
    if (lead < 0x80)
        return {lead, 1};
    const size_t length = lead >= 0xF0 && lead <= 0xF4  ? 4
                          : lead >= 0xE0 && lead < 0xF0 ? 3
                          : lead >= 0xC2 && lead < 0xE0 ? 2
                                                        : 0;
    if (length == 0 || at + length > text.size())
        return {};
    int32_t codePoint = lead & (0xFF >> (length + 1));
    for (size_t i = 1; i < length; ++i) {
        if ((byte(at + i) & 0xC0) != 0x80)
            return {};
        codePoint = (codePoint << 6) | (byte(at + i) & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
    const int32_t smallest[] = {0, 0, 0x80, 0x800, 0x10000};
    if (codePoint < smallest[length] || (codePoint >= 0xD800 && codePoint <= 0xDFFF) || codePoint > 0x10FFFF)
        return {};
    return {codePoint, length};
}

bool isControl(int32_t c)
{
    return c < 0x20 || (c >= 0x7F && c <= 0x9F);
}

bool isBidiControl(int32_t c)
{
    return c == 0x061C || c == 0x200E || c == 0x200F || (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
}

std::string codePointText(int32_t c)
{
    return formatted("U+%04X", static_cast<unsigned>(c));
}

} // namespace

std::string unprintableCharacter(const std::string &text)
{
    for (size_t at = 0; at < text.size();) {
        const Utf8Character c = decodeUtf8(text, at);
        const std::string where = " at byte " + std::to_string(at);
        if (c.codePoint < 0)
            return formatted("a byte that is not UTF-8 (0x%02X)", static_cast<unsigned char>(text[at])) + where;
        if (c.codePoint == '\n' || c.codePoint == '\r')
            return "a line break (" + codePointText(c.codePoint) + ")" + where;
        if (isControl(c.codePoint))
            return "a control character (" + codePointText(c.codePoint) + ")" + where;
        if (isBidiControl(c.codePoint))
            return "a bidirectional text control (" + codePointText(c.codePoint) + ")" + where;
        at += c.length;
    }
    return {};
}

std::string roffText(const std::string &text)
{
    std::string out;
    bool lineStart = true;
    for (const char c : text) {
        if (c == '\\')
            out += "\\e";
        else if (c == '-')
            out += "\\-";
        else if (lineStart && (c == '.' || c == '\''))
            out += std::string("\\&") + c;
        else
            out += c;
        lineStart = c == '\n';
    }
    return out;
}

bool isUtf8(const std::string &text)
{
    for (size_t at = 0; at < text.size();) {
        const Utf8Character c = decodeUtf8(text, at);
        if (c.codePoint < 0)
            return false;
        at += c.length;
    }
    return true;
}

std::string printable(const std::string &text)
{
    std::string out;
    out.reserve(text.size());
    for (size_t at = 0; at < text.size();) {
        const Utf8Character c = decodeUtf8(text, at);
        if (c.codePoint < 0)
            out += formatted("\\x%02X", static_cast<unsigned char>(text[at]));
        else if (c.codePoint == '\n')
            out += "\\n";
        else if (c.codePoint == '\t')
            out += "\\t";
        else if (isControl(c.codePoint) || isBidiControl(c.codePoint))
            out += formatted("\\u%04X", static_cast<unsigned>(c.codePoint));
        else
            out.append(text, at, c.length);
        at += c.length;
    }
    return out;
}

std::string csvField(const std::string &text)
{
    // A spreadsheet runs a field that starts like a formula; an apostrophe first makes it text.
    const bool formula = !text.empty() && std::string("=+-@\t\r").find(text.front()) != std::string::npos;
    const std::string field = formula ? "'" + text : text;
    if (field.find_first_of(",\"\r\n") == std::string::npos)
        return field;
    std::string quoted = "\"";
    for (char c : field)
        quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return quoted + "\"";
}

std::vector<std::string> splitLines(const std::string &text)
{
    std::vector<std::string> lines;
    size_t start = 0;
    while (true) {
        const size_t end = text.find('\n', start);
        lines.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
        if (end == std::string::npos)
            return lines;
        start = end + 1;
    }
}

} // namespace optlog
