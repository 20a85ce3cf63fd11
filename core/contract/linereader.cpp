// SPDX-License-Identifier: MIT
#include "core/contract/linereader.h"

#include <algorithm>
#include <cerrno>
#include <utility>

#include <poll.h>
#include <unistd.h>

namespace optlog {

std::optional<LineReader::Line> LineReader::next(std::chrono::milliseconds wait)
{
    for (;;) {
        if (std::optional<Line> line = takeLine())
            return line;
        if (m_end) {
            if (m_pending.bytes == 0)
                return std::nullopt;
            m_pending.terminated = false; // a last line without its newline
            return std::exchange(m_pending, {});
        }
        pollfd ready{m_fd, POLLIN, 0};
        const int polled = ::poll(&ready, 1, int(wait.count()));
        if (polled == 0)
            return std::nullopt;
        if (polled < 0 && errno == EINTR)
            continue;
        char chunk[65536];
        const ssize_t got = polled < 0 ? -1 : ::read(m_fd, chunk, sizeof chunk);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            m_end = true; // the end, or an error reading: the writer is gone either way
            continue;
        }
        m_buffer.append(chunk, size_t(got));
    }
}

std::optional<LineReader::Line> LineReader::takeLine()
{
    const size_t newline = m_buffer.find('\n');
    const size_t part = newline == std::string::npos ? m_buffer.size() : newline;
    if (m_pending.text.size() < m_maxLineBytes + 1)
        m_pending.text.append(m_buffer, 0, std::min(part, m_maxLineBytes + 1 - m_pending.text.size()));
    m_pending.bytes += part;
    m_buffer.erase(0, newline == std::string::npos ? part : part + 1);
    if (newline == std::string::npos)
        return std::nullopt;
    return std::exchange(m_pending, {});
}

} // namespace optlog
