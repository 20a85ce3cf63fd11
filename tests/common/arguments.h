// SPDX-License-Identifier: MIT
// The benchmarks' whole-number arguments (rounds, steps, counts, seeds), read strictly: a bad one
// is an error that names the argument and what it got, never a silent 0 as atoi gives.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace optlog::testing {

// `text` as a whole number from `least` to `most`, or std::invalid_argument naming `name`.
inline int64_t wholeNumberArgument(const std::string &text, const std::string &name, int64_t least = 1,
                                   int64_t most = 1'000'000'000)
{
    try {
        size_t used = 0;
        const long long value = std::stoll(text, &used);
        if (used == text.size() && value >= least && value <= most)
            return value;
    } catch (const std::exception &) { // not a number, or out of long long's range
    }
    throw std::invalid_argument(name + " must be a whole number from " + std::to_string(least) + " to "
                                + std::to_string(most) + ", not \"" + text + "\"");
}

} // namespace optlog::testing
