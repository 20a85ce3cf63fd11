// SPDX-License-Identifier: MIT
#include "core/contract/privatefolder.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <vector>

#include <stdlib.h>

namespace optlog {

PrivateFolder::PrivateFolder(const std::string &prefix)
{
    std::error_code error;
    const std::filesystem::path temporary = std::filesystem::temp_directory_path(error);
    const std::string pattern = (error ? std::string("/tmp") : temporary.string()) + "/" + prefix + "-XXXXXX";
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    if (::mkdtemp(name.data()) == nullptr) // 0700, and never one that was there
        throw std::runtime_error("cannot make a private folder " + pattern + ": " + std::strerror(errno));
    m_path = name.data();
}

PrivateFolder::~PrivateFolder()
{
    std::error_code ignored; // what cannot be removed stays private to this user
    std::filesystem::remove_all(m_path, ignored);
}

} // namespace optlog
