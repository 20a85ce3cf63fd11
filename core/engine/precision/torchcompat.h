// SPDX-License-Identifier: MIT
#pragma once

// The LibTorch calls whose C++ API changed between 1.13 and 2.x, in one place.
// Autocast in C++ is not an official API: only AutocastGuard (precision.h) calls these.

#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>
#include <torch/version.h>

// c10::Allocator::allocate is const up to LibTorch 2.2 and not from 2.3 on; an allocator declares
// it with this qualifier.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
#define OPTLOG_ALLOCATE_QUALIFIER
#else
#define OPTLOG_ALLOCATE_QUALIFIER const
#endif

namespace optlog::compat {

bool autocastEnabled(c10::DeviceType device);
void setAutocastEnabled(c10::DeviceType device, bool enabled);
c10::ScalarType autocastDtype(c10::DeviceType device);
void setAutocastDtype(c10::DeviceType device, c10::ScalarType dtype);
int incrementAutocastNesting();
int decrementAutocastNesting();
void clearAutocastCache();

bool cudaAvailable();

} // namespace optlog::compat
