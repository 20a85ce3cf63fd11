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
    HostFacts facts;
    facts.optlog = buildDescription();
    facts.eventFormat = kEventFormat;
    facts.startKeys = true; // `host start --key`: a lost answer is asked again
    facts.schema = Store::kSchemaVersion;
    facts.machine = thisMachine();
    facts.cpu = cpuModelName();
    facts.logicalCpus = defaultThreads();
    facts.cudaBuilt = cuda::built();
    facts.cuda = cuda::runtimeVersion();
    for (int i = 0; i < cuda::deviceCount(); ++i)
        facts.gpus.push_back(cuda::deviceDescription(i));
    for (const char *mode : {"fp32", "autocast-bf16"}) {
        const std::string family = precisionFamily(mode);
        facts.tuned.emplace_back(family, readTuning(tuningCacheFile(), machineKey(), family).has_value());
    }
    facts.hosted = hostedFolder();
    struct statvfs disk
    { };
    if (::statvfs(facts.hosted.c_str(), &disk) == 0)
        facts.freeBytes = int64_t(disk.f_bavail) * int64_t(disk.f_frsize);
    std::cout << toJsonText(facts) << "\n";
    return kExitOk;
}

} // namespace optlog
