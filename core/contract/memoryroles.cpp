// SPDX-License-Identifier: MIT
#include "core/contract/memoryroles.h"

#include "core/contract/rowlookup.h"

#include <algorithm>
#include <iterator>

namespace optlog {

namespace {

constexpr Named<MemoryRole> kRoleNames[] = {
    {MemoryRole::Parameters, "parameters", "parameters"},
    {MemoryRole::Gradients, "gradients", "gradients"},
    {MemoryRole::MasterWeights, "master_weights", "master weights"},
    {MemoryRole::OptimizerState, "optimizer_state", "optimizer state"},
    {MemoryRole::CommunicationBuffers, "communication_buffers", "communication buffers"},
    {MemoryRole::SavedActivations, "saved_activations", "saved activations"},
    {MemoryRole::Temporaries, "temporaries", "temporaries"},
    {MemoryRole::Peak, "peak", "peak"},
    {MemoryRole::PeakReserved, "peak_reserved", "peak reserved"},
    {MemoryRole::PeakRss, "peak_rss", "peak RSS"},
};

} // namespace

bool isPeakPart(MemoryRole role)
{
    return std::find(std::begin(kPeakParts), std::end(kPeakParts), role) != std::end(kPeakParts);
}

const char *memoryRoleName(MemoryRole role)
{
    return nameIn(kRoleNames, role);
}
const char *memoryRoleLabel(MemoryRole role)
{
    return labelIn(kRoleNames, role);
}
std::optional<MemoryRole> memoryRoleNamed(const std::string &name)
{
    return valueNamed(kRoleNames, name);
}

constexpr Named<MemorySource> kSourceNames[] = {{MemorySource::Predicted, "predicted"},
                                                {MemorySource::Measured, "measured"}};

const char *memorySourceName(MemorySource source)
{
    return nameIn(kSourceNames, source);
}

std::optional<MemorySource> memorySourceNamed(const std::string &name)
{
    return valueNamed(kSourceNames, name);
}

} // namespace optlog
