// SPDX-License-Identifier: MIT
#include "app/launcher.h"

#include "core/engine/environment.h"
#include "core/config/tuning.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

namespace optlog {

namespace {

// Without a tuning: measured on the 2-core development machine (README, "optlog tune"), with two
// intra-op threads LibTorch's OpenMP workers otherwise spin while OpenBLAS's threads wait; FP32
// training ran at 5,450 tokens/s with PASSIVE against 2,050 without it.
constexpr const char *kDefaultWaitPolicy = "PASSIVE";

// Set in the re-executed process: the names optlog set, so the run's environment can say so,
// and a guard against relaunching twice.
constexpr const char *kMarker = "OPTLOG_SET_VARIABLES";

} // namespace

void relaunchWithRuntimeVariables(char **argv, const std::string &precisionMode)
{
    if (std::getenv(kMarker))
        return;
    const std::string family = precisionFamily(precisionMode);
    const auto tuned = readTuning(tuningCacheFile(), machineKey(), family);
    std::vector<std::pair<std::string, std::string>> choices = {
        {"OMP_WAIT_POLICY", tuned ? tuned->waitPolicy : kDefaultWaitPolicy}};
    if (tuned && !tuned->coreType.empty())
        choices.push_back({"OPENBLAS_CORETYPE", tuned->coreType});
    if (tuned) {
        setenv("OPTLOG_TUNED_THREADS", std::to_string(tuned->threads).c_str(), 1);
        setenv("OPTLOG_TUNING", ("tuned for " + family + " by optlog tune (" + tuningCacheFile() + ")").c_str(), 1);
    } else {
        setenv("OPTLOG_TUNING", ("untuned: optlog tune has not measured " + family + " on this machine").c_str(), 1);
    }

    std::string setNames;
    for (const auto &[name, value] : choices) {
        if (std::getenv(name.c_str()))
            continue; // the user's or the system's value wins, an empty one too
        setenv(name.c_str(), value.c_str(), 0);
        setNames += (setNames.empty() ? "" : ",") + name;
    }
    setenv(kMarker, setNames.c_str(), 1);
    if (setNames.empty())
        return;
    execv("/proc/self/exe", argv);
    // If the re-exec fails the run still works, only slower; say so rather than stop.
    std::fprintf(stderr, "optlog: could not re-execute with %s set (%s); running with the defaults\n",
                 setNames.c_str(), std::strerror(errno));
}

} // namespace optlog
