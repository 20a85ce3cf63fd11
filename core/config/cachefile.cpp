// SPDX-License-Identifier: MIT
#include "core/config/cachefile.h"

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace optlog {

std::string cacheFilePath(const std::string &name)
{
    const char *xdg = std::getenv("XDG_CACHE_HOME");
    const char *home = std::getenv("HOME");
    const std::string base = xdg && *xdg ? xdg : std::string(home && *home ? home : "/tmp") + "/.cache";
    return base + "/optlog/" + name;
}

std::string studyFilePath(const std::string &name)
{
    const char *xdg = std::getenv("XDG_DATA_HOME");
    const char *home = std::getenv("HOME");
    const std::string folder = (xdg && *xdg ? xdg : std::string(home && *home ? home : "/tmp") + "/.local/share")
                               + "/optlog";
    std::error_code error;
    std::filesystem::create_directories(folder, error); // when it cannot, opening the study says why
    return folder + "/" + name;
}

nlohmann::json readJsonCache(const std::string &path)
{
    std::ifstream in(path);
    if (!in)
        return nlohmann::json::object();
    try {
        nlohmann::json value = nlohmann::json::parse(in);
        return value.is_object() ? value : nlohmann::json::object();
    } catch (const nlohmann::json::exception &) {
        return nlohmann::json::object();
    }
}

void updateJsonCache(const std::string &path, const std::function<void(nlohmann::json &)> &change)
{
    std::error_code ignored;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ignored);
    // Not `path`.lock: the launcher holds that one while its probe, a child, writes the tuning.
    const int lock = ::open((path + ".write-lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock >= 0)
        while (::flock(lock, LOCK_EX) != 0 && errno == EINTR) {
        }
    nlohmann::json value = readJsonCache(path);
    change(value);
    const std::string temporary = path + ".tmp" + std::to_string(::getpid());
    std::ofstream(temporary) << value.dump(2);
    std::filesystem::rename(temporary, path, ignored);
    if (lock >= 0)
        ::close(lock); // and the lock with it
}

} // namespace optlog
