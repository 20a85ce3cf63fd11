// SPDX-License-Identifier: MIT
#pragma once

#include "core/contract/dtype.h"

#include <ATen/core/Tensor.h>
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

// A dynamic loss scaler (LibTorch's C++ API has none): the loss is multiplied by the scale before
// backward; the gradients are divided by it before clipping; a step whose gradients hold an inf
// or NaN is skipped and the scale halves; after `growthInterval` clean steps it doubles.
class LossScaler
{
public:
    explicit LossScaler(double initialScale = 65536.0, int64_t growthInterval = 2000, double backoff = 0.5,
                        double growth = 2.0);

    at::Tensor scale(const at::Tensor &loss) const;
    // Divides every gradient by the scale; false when any gradient is not finite.
    bool unscale(const std::vector<at::Tensor> &parameters) const;
    // After a step: backs off on overflow, else counts toward growth.
    void update(bool foundNonFinite);

    double currentScale() const { return m_scale; }
    int64_t skippedSteps() const { return m_skipped; }
    // Where the scaler stands, for a checkpoint; restore() continues from it.
    struct State
    {
        double scale = 0;
        int64_t cleanSteps = 0;
        int64_t skipped = 0;
    };
    State state() const { return {m_scale, m_cleanSteps, m_skipped}; }
    void restore(const State &state);

private:
    double m_scale;
    int64_t m_growthInterval;
    double m_backoff;
    double m_growth;
    int64_t m_cleanSteps = 0;
    int64_t m_skipped = 0;
};

std::string dtypeName(c10::ScalarType type);
std::string dtypeName(const at::Tensor &tensor);

} // namespace optlog
