// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace optlog {

// What `optlog run` was asked for, and the decisions it implies: where the config comes from (a
// preset or file, a stored run with --from, a stopped run with --resume), whether that is allowed,
// and the rendezvous rank 0 serves. Each decision refuses bad input with a ConfigError or a
// StoreError (an InputError: exit 2) before anything is written.
struct RunRequest
{
    std::string configFile;
    std::string preset;
    std::string study; // empty: studyFilePath("study.sqlite")
    std::vector<std::string> overrides;
    bool jsonLines = false;
    int64_t repeats = 1; // more than one: each replicate over seeds in its own engine process
    bool force = false;  // train even when predicted not to fit the budget or the machine
    std::string from;    // "STUDY:RUN": start from that stored run's config instead of a preset or file
    std::string resume;  // a run of `study` to continue from its last checkpoint, with its own config
    // Data parallel across machines: rank 0 serves the rendezvous at HOST:PORT and trains into
    // `study`; another rank joins it there and takes the run's config from it.
    std::string rendezvous;
    int64_t rank = -1;     // -1: not given
    int64_t worldSize = 0; // 0: not given
};

} // namespace optlog
