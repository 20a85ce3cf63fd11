// SPDX-License-Identifier: MIT
#include "core/engine/precision/torchcompat.h"

#include <ATen/Context.h>
#include <ATen/autocast_mode.h>
#include <torch/version.h>

namespace optlog::compat {

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
// 2.4 folded the per-device functions into ones that take the device type.
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

bool cudaAvailable()
{
    return at::globalContext().hasCUDA();
}

} // namespace optlog::compat
