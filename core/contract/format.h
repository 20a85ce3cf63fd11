// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <string>

namespace optlog {

// "12.4 MiB", "1.50 GiB": bytes as every table, chart and report shows them.
std::string formatBytes(int64_t bytes);

} // namespace optlog
