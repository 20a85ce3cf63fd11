// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"
#include "core/engine/kernels/fusedadamw.h"
#include "core/engine/machine/hostsyncs.h"
#include "core/engine/precision/precision.h"

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

// The optimizer step as the trainer takes it: AdamW configured from the run, its learning rate,
// and the gate that decides on the device how the step treats its gradients.

namespace optlog {

// The gate of one optimizer step over `tensors`' gradients, computed on their device without a
// host read: their global norm (divided by the scaler's scale, with one), the factor that unscales
// them and clips them to `maxNorm`, and whether a gradient is inf or NaN (the step is skipped).
StepGate gradientGate(const std::vector<at::Tensor> &tensors, const LossScaler *scaler, double maxNorm);

// How a step's gate is made: gradientGate, or data parallelism's over every rank's gradients.
using GradientGate = std::function<StepGate(const std::vector<at::Tensor> &, const LossScaler *, double maxNorm)>;

// The trainer's guarded optimizer step: gates `tensors`' gradients with `gate`, steps unless a
// gradient is not finite, then lets the scaler (if any) back off or grow, all on the device. Only
// where the optimizer cannot take the gate on the device (FusedAdamW::stepOnDevice) does the host
// read whether to skip, counted in `syncs`. Returns the gate: its norm and skip flag are the
// step's metrics, read with them. Without a scaler a non-finite gradient skips the step too: it is
// not the loss scale's to correct, and the trainer says so.
StepGate stepUnlessNonFinite(torch::optim::AdamW &optimizer, const std::vector<at::Tensor> &tensors, LossScaler *scaler,
                             double maxNorm, HostSyncs &syncs, const GradientGate &gate = gradientGate);

// AdamW as the trainer configures it from `train`: weight decay on `decayed` (matrices and
// embeddings), none on `plain` (biases, LayerNorm gains), as GPT-2 and nanoGPT. The one-pass
// FusedAdamW, or LibTorch's own step where `libtorchStep` (bench_adamw times the two).
std::unique_ptr<torch::optim::AdamW> makeAdamW(const std::vector<at::Tensor> &decayed,
                                               const std::vector<at::Tensor> &plain, const TrainConfig &train,
                                               bool libtorchStep = false);

// Linear warm-up to the peak, then cosine decay to min_learning_rate at the last step.
double learningRateAt(const TrainConfig &train, int64_t step);

} // namespace optlog
