// SPDX-License-Identifier: MIT
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <string>

namespace optlog {

// $XDG_CACHE_HOME/optlog/<name>, else ~/.cache/optlog/<name>: what optlog measured about this
// machine (matmul peak, runtime tuning), kept between runs.
std::string cacheFilePath(const std::string &name);

// $XDG_DATA_HOME/optlog/<name>, else ~/.local/share/optlog/<name>, its folder created: where a
// study goes when none is named (`optlog run`, `optlog study`, the workbench's first start).
std::string studyFilePath(const std::string &name);

// The JSON object in `path`; an empty object when the file is missing or damaged (a damaged
// cache is measured again and rewritten, never trusted).
nlohmann::json readJsonCache(const std::string &path);
// Changes the JSON object in `path` under an exclusive lock on `path`.write-lock: read afresh, `change`d,
// written to a temporary file and renamed, so a concurrent reader never sees half a file and a
// concurrent writer (another run measuring for minutes) never loses what this one adds.
void updateJsonCache(const std::string &path, const std::function<void(nlohmann::json &)> &change);

} // namespace optlog
