// SPDX-License-Identifier: MIT
#include "core/config/presets.h"

#include "core/config/configerror.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace optlog {

namespace embedded {
extern const std::map<std::string, std::string> kPresetTexts;
extern const std::map<std::string, std::string> kStudyTexts;
} // namespace embedded

namespace {

namespace fs = std::filesystem;

// An installed program's folder of `kind` (presets, studies): PREFIX/share/optlog/<kind>, for a
// program in PREFIX/bin (optlog, the workbench) or in PREFIX/libexec/optlog (optlog-engine). A
// build tree has none.
fs::path installedFolder(const char *kind)
{
    std::error_code error;
    fs::path folder = fs::read_symlink("/proc/self/exe", error).parent_path();
    if (error)
        return {};
    if (folder.filename() == "optlog" && folder.parent_path().filename() == "libexec")
        folder = folder.parent_path();
    return folder.parent_path() / "share" / "optlog" / kind;
}

// The embedded texts, with the installed files of the same kind over them (the installed ones are
// what a user of the package can read, copy and change).
std::map<std::string, std::string> textsOf(const std::map<std::string, std::string> &embedded, const char *kind)
{
    std::map<std::string, std::string> texts = embedded;
    std::error_code error;
    for (const auto &entry : fs::directory_iterator(installedFolder(kind), error)) {
        if (entry.path().extension() != ".toml")
            continue;
        std::ifstream in(entry.path());
        std::ostringstream text;
        text << in.rdbuf();
        if (in)
            texts[entry.path().stem().string()] = text.str();
    }
    return texts;
}

std::vector<std::string> namesOf(const std::map<std::string, std::string> &texts)
{
    std::vector<std::string> names;
    for (const auto &entry : texts)
        names.push_back(entry.first);
    return names;
}

std::string lookup(const std::map<std::string, std::string> &texts, const std::string &name, const char *what)
{
    auto it = texts.find(name);
    if (it != texts.end())
        return it->second;
    std::string known;
    for (const auto &n : namesOf(texts))
        known += (known.empty() ? "" : ", ") + n;
    throw ConfigError(std::string("unknown ") + what + " '" + name + "'; known: " + known);
}

// Read once per process: the installed files do not change under a running program.
const std::map<std::string, std::string> &presetTexts()
{
    static const std::map<std::string, std::string> texts = textsOf(embedded::kPresetTexts, "presets");
    return texts;
}

const std::map<std::string, std::string> &studyTexts()
{
    static const std::map<std::string, std::string> texts = textsOf(embedded::kStudyTexts, "studies");
    return texts;
}

} // namespace

std::vector<std::string> presetNames()
{
    return namesOf(presetTexts());
}
std::string presetText(const std::string &name)
{
    return lookup(presetTexts(), name, "preset");
}
std::vector<std::string> studyNames()
{
    return namesOf(studyTexts());
}
std::string studyText(const std::string &name)
{
    return lookup(studyTexts(), name, "study");
}

} // namespace optlog
