// SPDX-License-Identifier: MIT
#pragma once

// What differs between the LibTorch versions optlog builds against (Debian's 1.13 and PyTorch's
// 2.x, docs/building.md), in one place: no other file spells a version check, so the rest of the
// code reads as if there were one version. Autocast in C++ is not an official API: only
// AutocastGuard (precision.h), the recomputation and the products' routing (gemm.cpp) call its
// functions below.

#include <ATen/core/Tensor.h>
#include <c10/core/DeviceType.h>
#include <c10/core/GradMode.h>
#include <c10/core/ScalarType.h>
#include <torch/version.h>

#include <string>
#include <vector>

#define OPTLOG_TORCH_AT_LEAST(major, minor) \
    (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

// c10::Allocator::allocate is const up to LibTorch 2.2 and not from 2.3 on; an allocator declares
// it with this qualifier.
#if OPTLOG_TORCH_AT_LEAST(2, 3)
#define OPTLOG_ALLOCATE_QUALIFIER
#else
#define OPTLOG_ALLOCATE_QUALIFIER const
#endif

namespace c10d {
class Backend;
class ProcessGroup;
} // namespace c10d

namespace optlog::compat {

// Grad mode, through c10's guards, which every version declares in c10/core/GradMode.h. ATen's
// alias at::NoGradGuard comes from ATen/core/grad_mode.h, which 1.13's headers include along the
// way and 2.11's do not; the code names only these.
using GradDisabledGuard = c10::NoGradGuard;
using GradModeGuard = c10::AutoGradMode; // GradModeGuard enable(true): gradients on inside a no-grad region

// torch::optim::Optimizer::state() is keyed by the parameter's TensorImpl: by the string of its
// address up to 2.1, by the address itself from 2.2 on (PyTorch PRs 108480 and 108748).
#if OPTLOG_TORCH_AT_LEAST(2, 2)
using OptimizerStateKey = void *;
#else
using OptimizerStateKey = std::string;
#endif
OptimizerStateKey optimizerStateKey(const at::Tensor &parameter);

// Autocast per device type. 2.4 folded the CPU and CUDA functions into ones that take the device
// type, and deprecated the old ones.
bool autocastEnabled(c10::DeviceType device);
void setAutocastEnabled(c10::DeviceType device, bool enabled);
c10::ScalarType autocastDtype(c10::DeviceType device);
void setAutocastDtype(c10::DeviceType device, c10::ScalarType dtype);
int incrementAutocastNesting();
int decrementAutocastNesting();
void clearAutocastCache();
// `t` cast to `dtype` as autocast casts an op's input: cached for the step while autocast is on.
at::Tensor autocastCachedCast(c10::ScalarType dtype, const at::Tensor &t, c10::DeviceType device);

// scaled_dot_product_attention, LibTorch's fused attention, from 2.0 on.
constexpr bool hasFusedAttention = OPTLOG_TORCH_AT_LEAST(2, 0);
// Causal attention over (B, H, T, D) q, k, v with dropout; throws std::logic_error where
// hasFusedAttention is false (runDevice refuses memory.attention = "sdpa" there first).
at::Tensor fusedCausalAttention(const at::Tensor &q, const at::Tensor &k, const at::Tensor &v, double dropout);
// The kernel fusedCausalAttention takes for these inputs ("flash", "efficient", "cudnn", "math"),
// as LibTorch chooses it; empty where hasFusedAttention is false.
std::string fusedAttentionKernel(const at::Tensor &q, const at::Tensor &k, const at::Tensor &v, double dropout);

// LibTorch's fused AdamW on CUDA (2.0 and newer): one multi-tensor kernel for every tensor of a
// group, which reads the step's gradient divisor and skip flag on the device. (2.4's CPU kernel is
// not taken: on the CPU a host read costs nothing, and LibTorch's own step keeps a 16-bit run
// bitwise what it is on every version.)
bool hasFusedAdamW(c10::DeviceType device);
// Steps `weights` in place, unless `foundInf` (0-d FP32) is 1; every gradient is first divided by
// `gradScale` (0-d FP32). `steps` are the tensors' step counts (FP32, on the device, already
// counting this step). Throws std::logic_error where hasFusedAdamW is false.
struct FusedAdamWArguments
{
    double lr = 0, beta1 = 0, beta2 = 0, weightDecay = 0, eps = 0;
};
void fusedAdamW(const std::vector<at::Tensor> &weights, const std::vector<at::Tensor> &gradients,
                const std::vector<at::Tensor> &expAvg, const std::vector<at::Tensor> &expAvgSq,
                const std::vector<at::Tensor> &steps, const FusedAdamWArguments &arguments, const at::Tensor &gradScale,
                const at::Tensor &foundInf);

// The c10d type that runs a process group's collectives: 2.x calls it a Backend
// (ProcessGroupGloo and ProcessGroupNCCL derive from it), 1.13 a ProcessGroup. Both are declared
// by <torch/csrc/distributed/c10d/ProcessGroup.hpp>.
#if OPTLOG_TORCH_AT_LEAST(2, 0)
using CollectiveBackend = c10d::Backend;
#else
using CollectiveBackend = c10d::ProcessGroup;
#endif

} // namespace optlog::compat
