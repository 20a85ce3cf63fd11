// SPDX-License-Identifier: MIT
#include "core/contract/memoryroles.h"

#include <algorithm>
#include <iterator>

namespace optlog {

namespace {

struct RoleNames
{
    MemoryRole role;
    const char *name;
    const char *label;
};

constexpr RoleNames kRoleNames[] = {
    {MemoryRole::Parameters, "parameters", "parameters"},
    {MemoryRole::Gradients, "gradients", "gradients"},
    {MemoryRole::MasterWeights, "master_weights", "master weights"},
    {MemoryRole::OptimizerState, "optimizer_state", "optimizer state"},
    {MemoryRole::SavedActivations, "saved_activations", "saved activations"},
    {MemoryRole::Temporaries, "temporaries", "temporaries"},
    {MemoryRole::Peak, "peak", "peak"},
    {MemoryRole::PeakReserved, "peak_reserved", "peak reserved"},
    {MemoryRole::PeakRss, "peak_rss", "peak RSS"},
};

const RoleNames &namesOf(MemoryRole role)
{
    for (const auto &names : kRoleNames)
        if (names.role == role)
            return names;
    return kRoleNames[0]; // unreachable: every enumerator has a row
}

} // namespace

bool isPeakPart(MemoryRole role)
{
    return std::find(std::begin(kPeakParts), std::end(kPeakParts), role) != std::end(kPeakParts);
}

const char *memoryRoleName(MemoryRole role) { return namesOf(role).name; }
const char *memoryRoleLabel(MemoryRole role) { return namesOf(role).label; }

std::optional<MemoryRole> memoryRoleNamed(const std::string &name)
{
    for (const auto &names : kRoleNames)
        if (name == names.name)
            return names.role;
    return std::nullopt;
}

const char *memorySourceName(MemorySource source)
{
    return source == MemorySource::Predicted ? "predicted" : "measured";
}

std::optional<MemorySource> memorySourceNamed(const std::string &name)
{
    for (MemorySource source : {MemorySource::Predicted, MemorySource::Measured})
        if (name == memorySourceName(source))
            return source;
    return std::nullopt;
}

} // namespace optlog
