// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace optlog {

// "12.4 MiB", "1.50 GiB": bytes as every table, chart and report shows them; below a MiB in KiB
// or bytes ("3.0 KiB", "512 B"), so a small amount never reads as none.
std::string formatBytes(int64_t bytes);

// "12%": a difference's size in whole percent, without its sign (the words around it say which way).
std::string percent(double fraction);

// printf into a string, of any length.
std::string formatted(const char *format, ...) __attribute__((format(printf, 1, 2)));

// One CSV field (RFC 4180): quoted, with its quotes doubled, when it holds a comma, a quote or a
// line break; as it is otherwise. A field that starts with =, +, -, @, a tab or a carriage return
// gets an apostrophe first, so that a spreadsheet shows it as text instead of running it.
std::string csvField(const std::string &text);

// The longest name of a run or group, in bytes: a line of a table, not a paragraph.
constexpr size_t kMaxNameBytes = 200;

// What makes `text` unfit to be a name shown in a table, or empty when nothing does: bytes that are
// not UTF-8, a control character (a line break, a tab, an escape sequence's ESC, C1 controls) or
// a bidirectional override or isolate (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C),
// which would reorder what a terminal or a table shows after it. Says which and where:
// "a line break (U+000A) at byte 5".
std::string unprintableCharacter(const std::string &text);

// The lines of `text`, split at line breaks (an empty text is one empty line).
std::vector<std::string> splitLines(const std::string &text);

// `text` for a roff manual page: a backslash, a hyphen and a line's leading dot or apostrophe
// escaped, so that none is read as a request.
std::string roffText(const std::string &text);

// Whether `text` is well-formed UTF-8 throughout.
bool isUtf8(const std::string &text);

// `text` for a terminal or a text table: every character unprintableCharacter() objects to written
// as an escape ("\n", "\u202E", "\xFF" for a byte that is not UTF-8); all else as it is.
std::string printable(const std::string &text);

} // namespace optlog
