// SPDX-License-Identifier: MIT
#include "core/remote/hostplaces.h"

#include "core/config/cachefile.h"
#include "core/config/configerror.h"
#include "core/contract/thismachine.h"

#include <chrono>
#include <cstdio>
#include <filesystem>

#include <unistd.h>

namespace optlog {

namespace {

// FNV-1a: a short, stable name for a path, not a secret.
std::string hashOf(const std::string &text)
{
    uint64_t hash = 14695981039346656037ull;
    for (const unsigned char c : text)
        hash = (hash ^ c) * 1099511628211ull;
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
    return std::string(hex, 8);
}

// Bytes and newest modification time of a file, or of every file in a folder.
std::pair<uintmax_t, int64_t> sizeAndTime(const std::filesystem::path &path)
{
    auto stamp = [](const std::filesystem::path &p) {
        return int64_t(
            std::chrono::duration_cast<std::chrono::seconds>(std::filesystem::last_write_time(p).time_since_epoch())
                .count());
    };
    if (!std::filesystem::is_directory(path))
        return {std::filesystem::file_size(path), stamp(path)};
    uintmax_t bytes = 0;
    int64_t newest = stamp(path);
    for (const auto &entry : std::filesystem::recursive_directory_iterator(path))
        if (entry.is_regular_file()) {
            bytes += entry.file_size();
            newest = std::max(newest, stamp(entry.path()));
        }
    return {bytes, newest};
}

SentFile sent(const std::string &key, const std::string &path)
{
    std::error_code error;
    const std::filesystem::path absolute = std::filesystem::absolute(path, error);
    if (path.empty() || !std::filesystem::exists(absolute, error))
        throw ConfigError(key + " = \"" + path + "\": no such file here, to send to the host");
    const auto [bytes, time] = sizeAndTime(absolute);
    const std::string stem = absolute.filename().string();
    return {absolute.string(), stem + "-" + std::to_string(bytes) + "-" + std::to_string(time),
            std::filesystem::is_directory(absolute)};
}

} // namespace

std::string hostedFolder()
{
    const std::string folder = studyFilePath("hosted");
    std::error_code ignored; // when it cannot be made, opening the study there says why
    std::filesystem::create_directories(folder + "/files", ignored);
    return folder;
}

std::string hostedStudyName(const std::string &study)
{
    std::error_code error;
    const std::filesystem::path absolute = std::filesystem::absolute(study, error);
    return thisMachine() + "-" + absolute.stem().string() + "-" + hashOf(absolute.string()) + ".sqlite";
}

std::vector<SentFile> filesToSend(RunConfig &config, const std::string &hostFolder)
{
    std::vector<SentFile> files;
    if (config.model.source == ModelSource::TorchScript) {
        files.push_back(sent("model.path", config.model.path));
        config.model.path = hostFolder + "/files/" + files.back().name;
    }
    if (config.data.corpus == Corpus::Text || config.data.corpus == Corpus::Tokens) {
        files.push_back(sent("data.path", config.data.path));
        config.data.path = hostFolder + "/files/" + files.back().name;
    }
    return files;
}

} // namespace optlog
