// SPDX-License-Identifier: MIT
#include "core/contract/format.h"

#include <cstdarg>
#include <cstdio>

namespace optlog {

std::string formatBytes(int64_t bytes)
{
    char text[32];
    if (bytes >= (int64_t(1) << 30))
        std::snprintf(text, sizeof(text), "%.2f GiB", double(bytes) / double(int64_t(1) << 30));
    else
        std::snprintf(text, sizeof(text), "%.1f MiB", double(bytes) / double(1 << 20));
    return text;
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

} // namespace optlog
