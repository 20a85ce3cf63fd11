// SPDX-License-Identifier: MIT
#include "app/engine/relaunch.h"

#include "app/launcher.h"
#include "core/config/tuning.h"
#include "core/engine/machine/environment.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace optlog {

namespace {

// Set in the re-executed process: the names optlog set, so the run's environment can say so,
// and a guard against relaunching twice.
constexpr const char *kMarker = "OPTLOG_SET_VARIABLES";

// Whether an untuned machine's first run probes first: unless OPTLOG_PROBE_UNTUNED=0 (tests that
// must run untuned, and people who want optlog's fixed defaults).
bool probesUntuned()
{
    const char *setting = std::getenv("OPTLOG_PROBE_UNTUNED");
    return !setting || std::string(setting) != "0";
}

// The tuning for `family` here, made first by a quick probe where there is none. Runs started
// together (a study's, a workbench queue's) wait for one probe under a lock on the cache rather
// than each probing while the others load the machine.
std::optional<TunedSettings> tuningFor(const char *self, const std::string &precisionMode, const std::string &family)
{
    const std::string cache = tuningCacheFile(), key = machineKey();
    std::optional<TunedSettings> tuned = readTuning(cache, key, family);
    if (tuned || !probesUntuned())
        return tuned;
    const std::string lockPath = cache + ".lock";
    std::error_code ignored; // without the folder the probe still runs, unlocked
    std::filesystem::create_directories(std::filesystem::path(cache).parent_path(), ignored);
    const int lock = open(lockPath.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock >= 0)
        flock(lock, LOCK_EX);
    tuned = readTuning(cache, key, family); // another run may have probed while this one waited
    if (!tuned) {
        std::fprintf(stderr,
                     "optlog: this machine has no tuning for %s; probing threads, wait policy and product path first "
                     "(about a minute; "
                     "`optlog tune` measures longer)\n",
                     family.c_str());
        const auto start = std::chrono::steady_clock::now();
        const int status = runChild(selfPath(self), {"tune", "--quick", "--modes", precisionMode}, {}, true);
        tuned = readTuning(cache, key, family);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (tuned)
            std::fprintf(stderr, "optlog: probed in %.0f s: %d thread%s, OMP_WAIT_POLICY=%s%s%s%s%s (kept in %s)\n",
                         seconds, tuned->threads, tuned->threads == 1 ? "" : "s", tuned->waitPolicy.c_str(),
                         tuned->coreType.empty() ? "" : ", OPENBLAS_CORETYPE=", tuned->coreType.c_str(),
                         tuned->productPath.empty() ? "" : ", products on ", tuned->productPath.c_str(), cache.c_str());
        else if (status == 0) // it ran, and kept nothing: the machine was busy (app/engine/tune.cpp)
            std::fprintf(stderr,
                         "optlog: the machine was busy while the probe ran, so nothing was kept; this run uses the "
                         "untuned defaults, and the next probes again\n");
        else
            std::fprintf(stderr, "optlog: the probe failed (exit %d); this run uses the untuned defaults\n", status);
    }
    if (lock >= 0)
        close(lock); // and with it the lock
    return tuned;
}

} // namespace

void relaunchWithRuntimeVariables(char **argv, const std::string &precisionMode)
{
    if (std::getenv(kMarker))
        return;
    const std::string family = precisionFamily(precisionMode);
    const auto tuned = tuningFor(argv[0], precisionMode, family);
    std::vector<std::pair<std::string, std::string>> choices = {
        {"OMP_WAIT_POLICY", tuned ? tuned->waitPolicy : kUntunedWaitPolicy}};
    if (tuned && !tuned->coreType.empty())
        choices.push_back({"OPENBLAS_CORETYPE", tuned->coreType});
    if (tuned) {
        setenv("OPTLOG_TUNED_THREADS", std::to_string(tuned->threads).c_str(), 1);
        if (!tuned->productPath.empty()) // runtime.gemm = "auto" takes it (environment.h: runProductPaths)
            setenv("OPTLOG_TUNED_GEMM", tuned->productPath.c_str(), 1);
        else
            unsetenv("OPTLOG_TUNED_GEMM"); // none measured: the defaults, whatever a parent passed on
        setenv("OPTLOG_TUNING",
               ("tuned for " + family + " by " + tuned->measuredBy + " (" + tuningCacheFile() + ")").c_str(), 1);
    } else {
        unsetenv("OPTLOG_TUNED_GEMM");
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
    std::fprintf(stderr, "optlog: could not re-execute with %s set (%s); running with the defaults\n", setNames.c_str(),
                 std::strerror(errno));
}

void relaunchFor(char **argv, const std::function<RunConfig()> &config)
{
    std::string mode;
    try {
        mode = config().precision.mode;
    } catch (const std::exception &) {
        return;
    }
    relaunchWithRuntimeVariables(argv, mode);
}

} // namespace optlog
