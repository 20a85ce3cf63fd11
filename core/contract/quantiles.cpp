// SPDX-License-Identifier: MIT
#include "core/contract/quantiles.h"

#include <algorithm>
#include <cmath>

namespace optlog {

double quantileOfSorted(const std::vector<double> &sorted, double q)
{
    if (sorted.empty())
        return 0;
    const double position = q * double(sorted.size() - 1);
    const size_t below = size_t(std::floor(position));
    const size_t above = std::min(below + 1, sorted.size() - 1);
    const double weight = position - double(below);
    if (weight == 0)
        return sorted[below]; // exactly a rank: its value, whatever lies above it
    return sorted[below] * (1 - weight) + sorted[above] * weight;
}

double medianOf(std::vector<double> values)
{
    std::sort(values.begin(), values.end());
    return quantileOfSorted(values, 0.5);
}

} // namespace optlog
