// SPDX-License-Identifier: MIT
#include "core/engine/machine/hostsyncs.h"

#include "core/contract/rowlookup.h"
#include "core/engine/machine/device.h"

namespace optlog {

namespace {

constexpr Named<SyncPurpose> kSyncPurposeKeys[] = {{SyncPurpose::StepMetrics, "step_metrics"},
                                                   {SyncPurpose::Validation, "validation"},
                                                   {SyncPurpose::SpeedProbe, "speed_probe"},
                                                   {SyncPurpose::Numerics, "numerics"},
                                                   {SyncPurpose::RankAgreement, "rank_agreement"},
                                                   {SyncPurpose::OptimizerSkip, "optimizer_skip"},
                                                   {SyncPurpose::Weights, "weights"}};

} // namespace

const char *syncPurposeKey(SyncPurpose purpose)
{
    return nameIn(kSyncPurposeKeys, purpose);
}

HostSyncs::HostSyncs(c10::Device device)
    : m_device(device)
{ }

at::Tensor HostSyncs::read(const at::Tensor &tensor, SyncPurpose purpose)
{
    record(purpose);
    return tensor.cpu();
}

void HostSyncs::wait(SyncPurpose purpose)
{
    record(purpose);
    synchronize(m_device);
}

int64_t HostSyncs::total() const
{
    int64_t sum = 0;
    for (const int64_t n : m_counts)
        sum += n;
    return sum;
}

std::map<std::string, int64_t> HostSyncs::counts() const
{
    std::map<std::string, int64_t> out;
    for (size_t i = 0; i < kSyncPurposes; ++i)
        if (m_counts[i] > 0)
            out[syncPurposeKey(SyncPurpose(i))] = m_counts[i];
    return out;
}

} // namespace optlog
