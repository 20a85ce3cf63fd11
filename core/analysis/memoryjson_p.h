// SPDX-License-Identifier: MIT
#pragma once
// For this folder's JSON writers only: a memory row as `optlog export` and the JSON report both
// write it, so that the two formats cannot drift apart.

#include "core/contract/measurements.h"
#include "core/contract/memoryroles.h"

#include <nlohmann/json.hpp>

namespace optlog {

inline nlohmann::json memoryRowJson(const MemoryRow &row)
{
    return {{"role", memoryRoleName(row.role)},
            {"dtype", row.dtype},
            {"bytes", row.bytes},
            {"source", memorySourceName(row.source)}};
}

} // namespace optlog
