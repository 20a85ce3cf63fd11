// SPDX-License-Identifier: MIT
#include "core/engine/compat/torchcompat.h"

#include "core/contract/rowlookup.h"

#include <ATen/Context.h>
#include <ATen/autocast_mode.h>
#if OPTLOG_TORCH_AT_LEAST(2, 0)
#include <ATen/ops/_fused_adamw.h>
#include <ATen/ops/_fused_sdp_choice.h>
#include <ATen/ops/scaled_dot_product_attention.h>
#endif
#if !OPTLOG_TORCH_AT_LEAST(2, 2)
#include <c10/util/C++17.h> // c10::guts::to_string
#endif

#include <stdexcept>

namespace optlog::compat {

OptimizerStateKey optimizerStateKey(const at::Tensor &parameter)
{
#if OPTLOG_TORCH_AT_LEAST(2, 2)
    return parameter.unsafeGetTensorImpl();
#else
    return c10::guts::to_string(parameter.unsafeGetTensorImpl());
#endif
}

#if OPTLOG_TORCH_AT_LEAST(2, 4)
bool autocastEnabled(c10::DeviceType device)
{
    return at::autocast::is_autocast_enabled(device);
}
void setAutocastEnabled(c10::DeviceType device, bool enabled)
{
    at::autocast::set_autocast_enabled(device, enabled);
}
c10::ScalarType autocastDtype(c10::DeviceType device)
{
    return at::autocast::get_autocast_dtype(device);
}
void setAutocastDtype(c10::DeviceType device, c10::ScalarType dtype)
{
    at::autocast::set_autocast_dtype(device, dtype);
}
#else
bool autocastEnabled(c10::DeviceType device)
{
    return device == c10::DeviceType::CUDA ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
}

void setAutocastEnabled(c10::DeviceType device, bool enabled)
{
    if (device == c10::DeviceType::CUDA)
        at::autocast::set_enabled(enabled);
    else
        at::autocast::set_cpu_enabled(enabled);
}

c10::ScalarType autocastDtype(c10::DeviceType device)
{
    return device == c10::DeviceType::CUDA ? at::autocast::get_autocast_gpu_dtype()
                                           : at::autocast::get_autocast_cpu_dtype();
}

void setAutocastDtype(c10::DeviceType device, c10::ScalarType dtype)
{
    if (device == c10::DeviceType::CUDA)
        at::autocast::set_autocast_gpu_dtype(dtype);
    else
        at::autocast::set_autocast_cpu_dtype(dtype);
}
#endif

int incrementAutocastNesting()
{
    return at::autocast::increment_nesting();
}
int decrementAutocastNesting()
{
    return at::autocast::decrement_nesting();
}
void clearAutocastCache()
{
    at::autocast::clear_cache();
}

at::Tensor fusedCausalAttention(const at::Tensor &q, const at::Tensor &k, const at::Tensor &v, double dropout)
{
#if OPTLOG_TORCH_AT_LEAST(2, 0)
    return at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, dropout, /*is_causal=*/true);
#else
    (void) q, (void) k, (void) v, (void) dropout;
    throw std::logic_error("fused attention needs LibTorch 2.x");
#endif
}

std::string fusedAttentionKernel(const at::Tensor &q, const at::Tensor &k, const at::Tensor &v, double dropout)
{
#if OPTLOG_TORCH_AT_LEAST(2, 0)
    // at::SDPBackend's values, the same since 2.0.
    static constexpr Named<int64_t> backends[] = {{0, "math"}, {1, "flash"}, {2, "efficient"}, {3, "cudnn"}};
    const int64_t chosen = at::_fused_sdp_choice(q, k, v, /*attn_mask=*/{}, dropout, /*is_causal=*/true);
    const Named<int64_t> *row = findRow(backends, &Named<int64_t>::value, chosen);
    return row ? row->name : "other";
#else
    (void) q, (void) k, (void) v, (void) dropout;
    return "";
#endif
}

at::Tensor autocastCachedCast(c10::ScalarType dtype, const at::Tensor &t, c10::DeviceType device)
{
    return at::autocast::cached_cast(dtype, t, device);
}

bool hasFusedAdamW(c10::DeviceType device)
{
    return device == c10::DeviceType::CUDA && OPTLOG_TORCH_AT_LEAST(2, 0);
}

void fusedAdamW(const std::vector<at::Tensor> &weights, const std::vector<at::Tensor> &gradients,
                const std::vector<at::Tensor> &expAvg, const std::vector<at::Tensor> &expAvgSq,
                const std::vector<at::Tensor> &steps, const FusedAdamWArguments &a, const at::Tensor &gradScale,
                const at::Tensor &foundInf)
{
#if OPTLOG_TORCH_AT_LEAST(2, 0)
    at::_fused_adamw_(weights, gradients, expAvg, expAvgSq, /*max_exp_avg_sqs=*/{}, steps, a.lr, a.beta1, a.beta2,
                      a.weightDecay, a.eps, /*amsgrad=*/false, /*maximize=*/false, gradScale, foundInf);
#else
    (void) weights, (void) gradients, (void) expAvg, (void) expAvgSq, (void) steps, (void) a, (void) gradScale,
        (void) foundInf;
    throw std::logic_error("LibTorch's fused AdamW needs 2.0 and CUDA");
#endif
}

} // namespace optlog::compat
