// SPDX-License-Identifier: MIT
#pragma once

#include <QString>

namespace optlog {

// What a technique's config field buys and what it costs, in one or two sentences; empty for
// fields that are not a memory or precision technique.
QString techniqueTradeoff(const QString &fieldPath);

} // namespace optlog
