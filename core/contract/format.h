// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <string>

namespace optlog {

// "12.4 MiB", "1.50 GiB": bytes as every table, chart and report shows them.
std::string formatBytes(int64_t bytes);

// printf into a string, of any length.
std::string formatted(const char *format, ...) __attribute__((format(printf, 1, 2)));

// One CSV field (RFC 4180): quoted, with its quotes doubled, when it holds a comma, a quote or a
// line break; as it is otherwise. A field that starts with =, +, -, @, a tab or a carriage return
// gets an apostrophe first, so that a spreadsheet shows it as text instead of running it.
std::string csvField(const std::string &text);

} // namespace optlog
