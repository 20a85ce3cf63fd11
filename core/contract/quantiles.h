// SPDX-License-Identifier: MIT
#pragma once

#include <vector>

namespace optlog {

// The q-quantile (0 to 1) of values sorted ascending, linear between the two nearest ranks (as
// numpy's default); 0 when there are none. For several quantiles of one sample, sorted once.
double quantileOfSorted(const std::vector<double> &sorted, double q);
// The middle value, or the mean of the middle two for an even count; 0 when there are none.
double medianOf(std::vector<double> values);

} // namespace optlog
