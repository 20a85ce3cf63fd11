// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

namespace optlog {

// Lines of a file descriptor (a pipe from a trainer, or from ssh), waiting at most a given time for
// the next one, so that the caller can flush while its writer is quiet. A line longer than
// `maxLineBytes` is kept only up to one byte past that size, with its full length, so that a
// writer that never ends its line cannot fill the reader's memory.
class LineReader
{
public:
    LineReader(int fd, size_t maxLineBytes)
        : m_fd(fd)
        , m_maxLineBytes(maxLineBytes)
    { }

    struct Line
    {
        std::string text;
        size_t bytes = 0;       // the whole line's, beyond what `text` kept
        bool terminated = true; // false: the last line, which its writer never ended (it stopped mid-line)
    };

    // The next line; nothing when `wait` passed without one, or at the end (see atEnd()).
    std::optional<Line> next(std::chrono::milliseconds wait);
    bool atEnd() const { return m_end && m_buffer.empty() && m_pending.bytes == 0; }

private:
    std::optional<Line> takeLine();

    int m_fd;
    size_t m_maxLineBytes;
    bool m_end = false;
    std::string m_buffer;
    Line m_pending;
};

} // namespace optlog
