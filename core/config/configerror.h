// SPDX-License-Identifier: MIT
#pragma once

#include <stdexcept>
#include <string>

namespace optlog {

// A config that cannot run. The message names the key, the value and what is allowed.
class ConfigError : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

} // namespace optlog
