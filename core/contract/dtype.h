// SPDX-License-Identifier: MIT
#pragma once

#include <string>

namespace optlog {

// The floating-point dtypes a precision mode gives its states.
enum class Dtype { Float32, BFloat16, Float16 };

// "float32", "bfloat16", "float16": as LibTorch names them, and as a run stores what it read
// from its tensors.
const char *dtypeName(Dtype dtype);
// "fp32", "bf16", "fp16": the precision table's short names.
const char *shortDtypeName(Dtype dtype);
int dtypeBytes(Dtype dtype); // bytes per element

// A stored dtype name in the table's short form ("bfloat16" -> "bf16"); any other name ("mixed",
// "int64") is returned as it is.
std::string shortDtype(const std::string &dtypeName);

} // namespace optlog
