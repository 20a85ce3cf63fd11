// SPDX-License-Identifier: MIT
// Where a cluster task that stopped can go on: its shard, when its checkpoint fits the run.
#include "app/enginework.h"
#include "core/contract/inputerror.h"
#include "core/engine/run/runrequest.h"
#include "core/store/clusterjobs.h"

#include <filesystem>

namespace optlog {

namespace fs = std::filesystem;

std::string resumableShard(const Store &study, const PlannedRun &run)
{
    const std::vector<ClusterJob> jobs = clusterJobs(study);
    for (auto job = jobs.rbegin(); job != jobs.rend(); ++job)
        for (const ClusterTask &task : job->tasks) {
            if (task.runName != run.name)
                continue;
            const std::string shard = fs::absolute(study.absolutePath(task.shard)).string();
            if (!fs::exists(shard))
                continue;
            try {
                RunRequest resume;
                resume.study = shard;
                resume.resume = run.name;
                const Resumption resumption = resumptionOf(resume);
                if (resumption.run.configToml == toToml(run.config()))
                    return shard;
            } catch (const InputError &) {
                // not resumable there: it starts afresh
            }
            return "";
        }
    return "";
}

} // namespace optlog
