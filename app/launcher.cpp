// SPDX-License-Identifier: MIT
#include "app/launcher.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <unistd.h>

namespace optlog {

namespace {

// Measured on the 2-core development machine (README, "Threads"): with two intra-op threads,
// LibTorch's OpenMP workers otherwise spin while OpenBLAS's threads wait; FP32 training ran at
// 5,450 tokens/s with PASSIVE against 2,050 without it.
struct Choice
{
    const char *name;
    const char *value;
};
constexpr Choice kChoices[] = {{"OMP_WAIT_POLICY", "PASSIVE"}};

// Set in the re-executed process: the names optlog set, so the run's environment can say so,
// and a guard against relaunching twice.
constexpr const char *kMarker = "OPTLOG_SET_VARIABLES";

} // namespace

void relaunchWithRuntimeVariables(char **argv)
{
    if (std::getenv(kMarker))
        return;
    std::string setNames;
    for (const auto &choice : kChoices) {
        if (std::getenv(choice.name))
            continue; // the user's or the system's value wins, an empty one too
        setenv(choice.name, choice.value, 0);
        setNames += (setNames.empty() ? "" : ",") + std::string(choice.name);
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
