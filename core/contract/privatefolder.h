// SPDX-License-Identifier: MIT
#pragma once

#include <string>

namespace optlog {

// A folder for files that pass through the temporary folder (a config on its way to a host, a run
// on its way into the study, a tuning's candidate runs): made afresh by mkdtemp, so its name cannot
// be known before and no one else can have made it, readable by this user only (0700), and removed
// with everything in it when this object ends. Files in it are as private as it is, whatever their
// names. Throws std::runtime_error, naming the folder and why, when it cannot be made.
class PrivateFolder
{
public:
    // In $TMPDIR (else /tmp), named `prefix` and six random characters.
    explicit PrivateFolder(const std::string &prefix);
    ~PrivateFolder();
    PrivateFolder(const PrivateFolder &) = delete;
    PrivateFolder &operator=(const PrivateFolder &) = delete;

    const std::string &path() const { return m_path; }
    // The path of `name` in it.
    std::string file(const std::string &name) const { return m_path + "/" + name; }

private:
    std::string m_path;
};

} // namespace optlog
