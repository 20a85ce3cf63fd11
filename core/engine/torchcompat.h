// SPDX-License-Identifier: MIT
#pragma once

// The LibTorch calls whose C++ API changed between 1.13 and 2.x, in one place.
// Autocast in C++ is not an official API: only AutocastGuard (precision.h) calls these.

#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>

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
