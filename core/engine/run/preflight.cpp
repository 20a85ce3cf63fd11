// SPDX-License-Identifier: MIT
#include "core/engine/run/preflight.h"

#include "core/config/config.h"
#include "core/config/configerror.h"
#include "core/contract/format.h"
#include "core/contract/memoryroles.h"
#include "core/engine/machine/calibration.h"
#include "core/memorymodel/memorymodel.h"
#include "core/memorymodel/modelshape.h"

#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>

namespace optlog {

namespace {

// A number of bytes from the first line of a cgroup file; nothing for "max" or a missing file.
std::optional<int64_t> cgroupBytes(const std::string &path)
{
    std::ifstream in(path);
    std::string text;
    if (!(in >> text) || text == "max")
        return std::nullopt;
    try {
        return std::stoll(text);
    } catch (const std::exception &) {
        return std::nullopt;
    }
}

std::optional<int64_t> memAvailableBytes()
{
    std::ifstream in("/proc/meminfo");
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::string name;
        int64_t kibibytes = 0;
        if (fields >> name >> kibibytes && name == "MemAvailable:")
            return kibibytes * 1024;
    }
    return std::nullopt;
}

// The role that takes the most, and the field that changes it most directly: a TorchScript
// module's size is its own code's, so its model state answers to the precision mode.
std::string largestRoleField(const RunConfig &config, const MemoryEstimate &estimate, std::string *roleLabel)
{
    const auto largest = std::max_element(estimate.roles.begin(), estimate.roles.end(),
                                          [](const RoleEstimate &a, const RoleEstimate &b) {
                                              return a.bytes < b.bytes;
                                          });
    if (largest == estimate.roles.end())
        return "train.microbatch";
    *roleLabel = memoryRoleLabel(largest->role);
    const bool activations = largest->role == MemoryRole::SavedActivations || largest->role == MemoryRole::Temporaries;
    if (activations)
        return "train.microbatch";
    return config.model.source == ModelSource::Builtin ? "model.width" : "precision.mode";
}

std::string levers(const std::string &field)
{
    return field == "train.microbatch"
               ? "lower train.microbatch (with train.accumulation to keep the batch) or model.context_length, or "
                 "set memory.checkpoint_every = 1"
           : field == "model.width"
               ? "lower model.width or model.layers, or choose a 16-bit precision.mode"
               : "choose a 16-bit precision.mode, or shard the model state over ranks (distributed.zero_stage)";
}

} // namespace

AvailableMemory availableMemory()
{
    AvailableMemory available;
    if (const auto bytes = memAvailableBytes()) {
        available.bytes = *bytes;
        available.source = "MemAvailable in /proc/meminfo";
    }
    // cgroup v2, then v1: a container's limit can be far below what the kernel has free.
    const std::pair<const char *, const char *> limits[] = {{"/sys/fs/cgroup/memory.max",
                                                             "/sys/fs/cgroup/memory.current"},
                                                            {"/sys/fs/cgroup/memory/memory.limit_in_bytes",
                                                             "/sys/fs/cgroup/memory/memory.usage_in_bytes"}};
    for (const auto &[limitFile, usageFile] : limits) {
        const auto limit = cgroupBytes(limitFile), usage = cgroupBytes(usageFile);
        if (!limit || !usage)
            continue;
        const int64_t left = std::max<int64_t>(*limit - *usage, 0);
        if (available.bytes == 0 || left < available.bytes) {
            available.bytes = left;
            available.source = std::string("the cgroup's limit (") + limitFile + ")";
        }
        break;
    }
    return available;
}

void checkMemoryFits(const RunConfig &config, const MemoryEstimate &estimate, const AvailableMemory &available)
{
    std::string role = "its largest role";
    const std::string field = largestRoleField(config, estimate, &role);
    const std::string predicted = "the run is predicted to need " + formatBytes(estimate.peakBytes) + " at its peak ("
                                  + (config.model.source == ModelSource::Builtin ? "memory model"
                                                                                 : "the module's probes")
                                  + "; " + role + " takes the most"
                                  + (estimate.calibration.empty() ? "" : "; " + estimate.calibration) + ")";
    if (!config.memory.budget.empty()) {
        const int64_t budget = parseBytes(config.memory.budget, "memory.budget");
        if (estimate.peakBytes > budget)
            throw ConfigError(field, "memory: " + predicted + ", above memory.budget = \"" + config.memory.budget
                                         + "\" (" + formatBytes(budget) + "). " + levers(field)
                                         + "; or pass --force to train anyway and see where the budget refuses");
    }
    if (config.runtime.device != "cpu" || available.bytes == 0)
        return;
    if (estimate.peakBytes > available.bytes)
        throw ConfigError(field, "memory: " + predicted + ", above the " + formatBytes(available.bytes)
                                     + " this machine has available (" + available.source + "). " + levers(field)
                                     + "; or pass --force to try anyway");
    const int64_t calibration = matmulPeakBytes(config);
    if (calibration > available.bytes)
        throw ConfigError("model.width",
                          "memory: measuring the matmul peak for model.width = " + std::to_string(config.model.width)
                              + " needs " + formatBytes(calibration) + ", above the " + formatBytes(available.bytes)
                              + " this machine has available (" + available.source
                              + "). Lower model.width, or pass --force to try anyway");
}

std::optional<double> leastSeconds(const RunConfig &config, double peakGflops)
{
    if (config.model.source != ModelSource::Builtin || peakGflops <= 0)
        return std::nullopt;
    const auto &m = config.model;
    double flopsPerToken = modelFlopsPerToken(parameterCount(m), m.layers, m.contextLength, m.width);
    // Checkpointed blocks run their forward (a third of forward and backward) once more.
    if (config.memory.checkpointEvery > 0)
        flopsPerToken *= 1.0 + (1.0 / 3.0) * double(m.layers / config.memory.checkpointEvery) / double(m.layers);
    const double tokens = double(config.tokensPerStep()) * double(config.train.steps);
    // Every rank trains its share at the same peak.
    return flopsPerToken * tokens / (peakGflops * 1e9 * double(config.distributed.ranks));
}

std::optional<std::string> checkTimeFits(const RunConfig &config, double peakGflops, bool force)
{
    const std::optional<double> seconds = leastSeconds(config, peakGflops);
    if (!seconds || *seconds < kWarnedSeconds)
        return std::nullopt;
    const std::string floor = formatted("at least %.1f hours on this machine: %lld steps of %lld tokens at the "
                                        "%.0f GFLOP/s matmul peak measured here, of which runs reach a fraction",
                                        *seconds / 3600, (long long) config.train.steps,
                                        (long long) config.tokensPerStep(), peakGflops);
    if (*seconds > kRefusedSeconds && !force)
        throw ConfigError("train.steps", "time: the run is predicted to take " + floor
                                             + ". Lower train.steps or the model's size, run it on a GPU "
                                               "(runtime.device = \"cuda\"), or pass --force to train anyway");
    return "the run is predicted to take " + floor;
}

} // namespace optlog
