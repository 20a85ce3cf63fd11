// SPDX-License-Identifier: MIT
#pragma once

#include <stdexcept>
#include <string>

namespace optlog {

// Input that optlog refuses before it writes anything: a config, a corpus, a study file or a
// command's arguments. Every such error derives from this one, and every command maps it to
// kExitBadInput (outcome.h) with its message, which names what is wrong and what would be right.
class InputError : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

} // namespace optlog
