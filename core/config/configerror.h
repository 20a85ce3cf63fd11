// SPDX-License-Identifier: MIT
#pragma once

#include "core/contract/inputerror.h"

#include <stdexcept>
#include <string>

namespace optlog {

// A config that cannot run. The message names the key, the value and what is allowed; field()
// names the key as data, so a form can mark it without reading the message.
class ConfigError : public InputError
{
public:
    explicit ConfigError(const std::string &message)
        : InputError(message)
    { }
    ConfigError(std::string field, const std::string &message)
        : InputError(message)
        , m_field(std::move(field))
    { }

    // The dotted path of the field the message is about ("train.steps"); for a rule between
    // fields, the first it names. Empty when no one field is wrong (a file that is not TOML, an
    // unknown key, an unknown preset).
    const std::string &field() const { return m_field; }

private:
    std::string m_field;
};

// A technique this model cannot take, in a config that is otherwise right: chunked attention or a
// fused product for a TorchScript module (its attention and products are its own code), or
// checkpointing a module without blocks. A single run is refused as for any ConfigError; a study
// skips that run, says why, and trains and compares the rest.
class NotApplicable : public ConfigError
{
public:
    using ConfigError::ConfigError;
};

} // namespace optlog
