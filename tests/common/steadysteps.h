// SPDX-License-Identifier: MIT
#pragma once
// Steps of a run at a constant rate and loss, for tests that store a run with known numbers.

#include "core/contract/measurements.h"

#include <cstdint>
#include <vector>

namespace optlog::testing {

// `count` steps from 0, each of `tokensPerStep` tokens at `tokensPerSecond`, with loss `loss`.
inline std::vector<StepMetrics> steadySteps(int64_t count, int64_t tokensPerStep, double tokensPerSecond,
                                            double loss = 3.0)
{
    std::vector<StepMetrics> steps;
    for (int64_t s = 0; s < count; ++s) {
        StepMetrics m;
        m.step = s;
        m.tokens = (s + 1) * tokensPerStep;
        m.trainLoss = loss;
        m.stepSeconds = double(tokensPerStep) / tokensPerSecond;
        m.tokensPerSecond = tokensPerSecond;
        steps.push_back(m);
    }
    return steps;
}

} // namespace optlog::testing
