// SPDX-License-Identifier: MIT
#pragma once

#include "core/contract/dtype.h"

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>

#include <string>
#include <vector>

namespace optlog {

// What the training loop does for a precision mode: its row of the precision table
// (core/contract/precisionmodes.h) in LibTorch's types. Default-constructed: fp32.
struct PrecisionPlan
{
    std::string mode = "fp32";
    c10::ScalarType weights = c10::kFloat; // the model's parameters
    c10::ScalarType compute = c10::kFloat; // matmul-class ops; under autocast only those
    bool masterWeights = false;            // an FP32 copy that the optimizer updates
    bool autocast = false;
    bool lossScaling = false; // a dynamic loss scaler
};
// Throws ConfigError for a mode the table does not have.
PrecisionPlan precisionPlan(const std::string &mode);

c10::ScalarType scalarType(Dtype dtype);

// Turns autocast on for one device and dtype for its lifetime, counting the nesting so that the
// cast cache is cleared when the outermost guard ends, and restores the previous state.
class AutocastGuard
{
public:
    AutocastGuard(c10::DeviceType device, c10::ScalarType dtype, bool enabled = true);
    ~AutocastGuard();
    AutocastGuard(const AutocastGuard &) = delete;
    AutocastGuard &operator=(const AutocastGuard &) = delete;

private:
    c10::DeviceType m_device;
    bool m_active;
    bool m_previousEnabled = false;
    c10::ScalarType m_previousDtype = c10::kBFloat16;
};

// A dynamic loss scaler (LibTorch's C++ API has none), kept on the device so that no step waits
// for the host: the loss is multiplied by the scale before backward; the optimizer step divides
// the gradients by it (the trainer's StepGate) and skips a step whose gradients hold an inf or
// NaN, after which the scale halves; after `growthInterval` clean steps it doubles.
class LossScaler
{
public:
    // PyTorch's GradScaler's defaults.
    static constexpr double kInitialScale = 65536.0;
    static constexpr int64_t kGrowthInterval = 2000;
    static constexpr double kBackoff = 0.5;
    static constexpr double kGrowth = 2.0;

    explicit LossScaler(double initialScale = kInitialScale, int64_t growthInterval = kGrowthInterval,
                        double backoff = kBackoff, double growth = kGrowth,
                        c10::Device device = c10::Device(c10::DeviceType::CPU));

    at::Tensor scale(const at::Tensor &loss) const;
    // The scale, a 0-d FP32 tensor on the device.
    const at::Tensor &scaleTensor() const { return m_scale; }
    // Divides every gradient by the scale, and reads whether all are finite: a host read, for data
    // parallelism's gate, which agrees on it over the ranks on the host. The trainer's own gate
    // divides on the device instead (StepGate::factor).
    bool unscale(const std::vector<at::Tensor> &parameters) const;
    // After a step: `skipped` (0-d FP32, 1 or 0, on the device) backs off, else counts toward growth.
    void update(const at::Tensor &skipped);

    // Reads of the device (outside the step: tests, diagnostics, checkpoints).
    double currentScale() const;
    int64_t skippedSteps() const;
    // Where the scaler stands, for a checkpoint; restore() continues from it.
    struct State
    {
        double scale = 0;
        int64_t cleanSteps = 0;
        int64_t skipped = 0;
    };
    State state() const;
    void restore(const State &state);

private:
    at::Tensor m_scale, m_cleanSteps, m_skipped; // 0-d FP32 on the device
    int64_t m_growthInterval;
    double m_backoff;
    double m_growth;
};

std::string dtypeName(c10::ScalarType type);
std::string dtypeName(const at::Tensor &tensor);

} // namespace optlog
