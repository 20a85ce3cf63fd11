// SPDX-License-Identifier: MIT
#pragma once

#include "core/contract/memoryroles.h"

#include <cstdint>
#include <string>

namespace optlog {

// What a run measures, as the engine reports it, the study stores it and every reader shows it.

struct StepMetrics
{
    int64_t step = 0;         // optimizer step, from 0
    int64_t tokens = 0;       // tokens seen after this step
    double trainLoss = 0;     // mean over the step's microbatches, nats per token
    double learningRate = 0;
    double gradNorm = 0;      // global norm before clipping
    double stepSeconds = 0;   // wall time of the whole step, optimizer included
    double tokensPerSecond = 0;
    double lossScale = 0;     // the loss scaler's scale after the step; 0 without a scaler
    bool skipped = false;     // the scaler found an inf or NaN gradient and skipped the step
    double machineGflops = 0; // the reference kernel timed after this step (machine-speed index); 0 = not timed
};

struct ValidationPoint
{
    int64_t step = 0;
    int64_t tokens = 0;
    double loss = 0; // nats per token over the study's fixed validation set
};

// One role's bytes in one run, predicted or measured.
struct MemoryRow
{
    MemoryRole role = MemoryRole::Peak;
    std::string dtype;  // float32, bfloat16, ...; "mixed" or "" where a role holds several
    int64_t bytes = 0;
    MemorySource source = MemorySource::Measured;
};

} // namespace optlog
