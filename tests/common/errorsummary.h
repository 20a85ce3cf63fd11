// SPDX-License-Identifier: MIT
#pragma once
// How close a set of predictions came to their measurements, as the memory benchmarks print it.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace optlog::testing {

// "SOURCE: N of M configs have the predicted peak within 5% of the measured, K within 10%; median
// error E%, largest L%." from relative errors (predicted - measured) / measured.
inline void printPeakErrorSummary(const std::string &source, const std::vector<double> &errors)
{
    std::vector<double> magnitudes;
    for (double e : errors)
        magnitudes.push_back(std::fabs(e));
    if (magnitudes.empty())
        return;
    std::sort(magnitudes.begin(), magnitudes.end());
    const auto within = [&magnitudes](double bound) {
        return std::count_if(magnitudes.begin(), magnitudes.end(), [bound](double m) { return m <= bound; });
    };
    std::printf("\n%s: %ld of %zu configs have the predicted peak within 5%% of the measured, %ld within 10%%; "
                "median error %.1f%%, largest %.1f%%. Sizes in KiB.\n",
                source.c_str(), long(within(0.05)), magnitudes.size(), long(within(0.10)),
                100 * magnitudes[magnitudes.size() / 2], 100 * magnitudes.back());
}

} // namespace optlog::testing
