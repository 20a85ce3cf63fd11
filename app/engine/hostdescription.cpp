// SPDX-License-Identifier: MIT
// `optlog host describe`: what the laptop's side learns of a host, from the host's engine.
#include "app/enginework.h"
#include "app/remote.h"
#include "core/config/tuning.h"
#include "core/contract/engineevents.h"
#include "core/contract/thismachine.h"
#include "core/engine/machine/cudasupport.h"
#include "core/engine/machine/environment.h"
#include "core/remote/hostplaces.h"

#include <nlohmann/json.hpp>

#include <iostream>

#include <sys/statvfs.h>

namespace optlog {

int hostDescribeCommand()
{
    nlohmann::json gpus = nlohmann::json::array();
    for (int i = 0; i < cuda::deviceCount(); ++i)
        gpus.push_back(cuda::deviceDescription(i));
    nlohmann::json tuned = nlohmann::json::object();
    for (const char *mode : {"fp32", "autocast-bf16"}) {
        const std::string family = precisionFamily(mode);
        tuned[family] = readTuning(tuningCacheFile(), machineKey(), family).has_value();
    }
    const std::string hosted = hostedFolder();
    struct statvfs disk
    { };
    const int64_t freeBytes = ::statvfs(hosted.c_str(), &disk) == 0 ? int64_t(disk.f_bavail) * int64_t(disk.f_frsize)
                                                                    : 0;
    const nlohmann::json description = {{"optlog", buildDescription()},
                                        {"event_format", kEventFormat},
                                        {"start_keys", true}, // `host start --key`: a lost answer is asked again
                                        {"schema", Store::kSchemaVersion},
                                        {"machine", thisMachine()},
                                        {"cpu", cpuModelName()},
                                        {"logical_cpus", defaultThreads()},
                                        {"cuda_built", cuda::built()},
                                        {"cuda", cuda::runtimeVersion()},
                                        {"gpus", gpus},
                                        {"tuned", tuned},
                                        {"hosted", hosted},
                                        {"free_bytes", freeBytes}};
    std::cout << description.dump() << "\n";
    return kExitOk;
}

} // namespace optlog
