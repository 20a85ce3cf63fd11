// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

namespace optlog::fuzz {

inline std::string textOf(const uint8_t *data, size_t size)
{
    return std::string(reinterpret_cast<const char *>(data), size);
}

// A path of this process's own in the temporary folder, so that fuzzers run side by side.
inline std::string scratchPath(const std::string &suffix)
{
    return (std::filesystem::temp_directory_path() / ("optlog-fuzz-" + std::to_string(::getpid()) + suffix)).string();
}

// A fuzzer's input as a file, for the readers that take a path (a study, a plan, a corpus), at
// scratchPath(suffix); removed when it goes, with SQLite's -wal and -shm beside it.
class InputFile
{
public:
    InputFile(const std::string &bytes, const std::string &suffix)
        : m_path(scratchPath(suffix))
    {
        remove();
        std::ofstream(m_path, std::ios::binary) << bytes;
    }
    ~InputFile() { remove(); }
    InputFile(const InputFile &) = delete;
    InputFile &operator=(const InputFile &) = delete;

    const std::string &path() const { return m_path; }

private:
    void remove() const
    {
        std::error_code ignored;
        for (const char *extra : {"", "-wal", "-shm", "-journal"})
            std::filesystem::remove_all(m_path + extra, ignored);
    }

    std::string m_path;
};

// A property the input broke: printed, then abort(), which libFuzzer reports with the input.
[[noreturn]] inline void broken(const std::string &what)
{
    std::fprintf(stderr, "optlog fuzz: %s\n", what.c_str());
    std::abort();
}

} // namespace optlog::fuzz
