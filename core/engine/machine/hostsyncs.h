// SPDX-License-Identifier: MIT
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <array>
#include <cstdint>
#include <map>
#include <string>

namespace optlog {

// Why the training loop waits for its device.
enum class SyncPurpose {
    StepMetrics,   // the steps' metrics: every runtime.metrics_every steps, and before a validation,
                   // a checkpoint, a stop, the end of warm-up and the last step
    Validation,    // the validation loss
    SpeedProbe,    // the machine-speed index's timing, before and after
    Numerics,      // the FP16/BF16 numerics: before and after them (their own reads fall between)
    RankAgreement, // data parallel, once per step each: the gradient norm, and the loss with a stop
    OptimizerSkip, // LibTorch's own AdamW step, which cannot skip a non-finite step on the device
    Weights,       // a weights file: its tensors (a checkpoint's optimizer and scaler state too)
};
inline constexpr size_t kSyncPurposes = size_t(SyncPurpose::Weights) + 1;
const char *syncPurposeKey(SyncPurpose purpose); // "step_metrics", ...

// Where the training loop waits for its device: each read of a tensor's value on the host and each
// explicit wait goes through here, counted by why (an occasion that reads several values after
// one wait, a weights file or a collective, counts once). On a GPU each one makes the host wait for every
// queued kernel, and the GPU then idles until the host launches again; the CPU makes the same calls
// at the same places (there they cost nothing), so a test on the CPU holds their number. The
// counts are stored with the run (the environment's "host_syncs").
class HostSyncs
{
public:
    explicit HostSyncs(c10::Device device);

    // `tensor`'s values, copied to the host.
    at::Tensor read(const at::Tensor &tensor, SyncPurpose purpose);
    // Waits for the device's queued work.
    void wait(SyncPurpose purpose);
    // A wait made by another part of the engine (a collective's result read on the host).
    void record(SyncPurpose purpose) { ++m_counts[size_t(purpose)]; }

    int64_t count(SyncPurpose purpose) const { return m_counts[size_t(purpose)]; }
    int64_t total() const;
    // {"step_metrics": 12, "validation": 1, ...}: the purposes with a count.
    std::map<std::string, int64_t> counts() const;

private:
    c10::Device m_device;
    std::array<int64_t, kSyncPurposes> m_counts{};
};

} // namespace optlog
