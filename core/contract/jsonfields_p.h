// SPDX-License-Identifier: MIT
// Typed reads of a JSON object's keys for the event stream's reader (engineevents.cpp): each
// failure a FormatError that names the key and what it should hold.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace optlog::Internal {

class FormatError : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

// A value as an error message shows it: a scalar as written (cut short), a container by its type.
// Never the dump of a container, which recurses as deep as the container is nested.
inline std::string shown(const nlohmann::json &value)
{
    if (!value.is_primitive())
        return std::string("an ") + value.type_name();
    const std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return text.size() > 40 ? text.substr(0, 40) + "..." : text;
}

// Typed reads of one event object's keys; each failure names the key and what it should hold.
class Fields
{
public:
    explicit Fields(const nlohmann::json &object)
        : m_object(object)
    { }

    bool has(const char *key) const { return m_object.contains(key); }

    const nlohmann::json &required(const char *key) const
    {
        const auto it = m_object.find(key);
        if (it == m_object.end())
            throw FormatError(std::string("'") + key + "' is missing");
        return *it;
    }

    int64_t integer(const char *key) const
    {
        const nlohmann::json &value = required(key);
        const bool fits = value.is_number_integer()
                          && !(value.is_number_unsigned() && value.get<uint64_t>() > uint64_t(INT64_MAX));
        if (!fits)
            throw FormatError(std::string("'") + key + "' must be a 64-bit integer, not " + shown(value));
        return value.get<int64_t>();
    }

    // A number that may be non-finite: JSON writes those as null.
    double number(const char *key) const
    {
        const nlohmann::json &value = required(key);
        if (value.is_null())
            return std::numeric_limits<double>::quiet_NaN();
        if (!value.is_number())
            throw FormatError(std::string("'") + key + "' must be a number or null, not " + shown(value));
        return value.get<double>();
    }

    // An optional number: NaN when left out, as when written as null.
    double numberOr(const char *key, double otherwise) const { return has(key) ? number(key) : otherwise; }

    // An object, as its JSON text; empty when left out.
    std::string objectText(const char *key) const
    {
        if (!has(key))
            return {};
        const nlohmann::json &value = required(key);
        if (!value.is_object())
            throw FormatError(std::string("'") + key + "' must be an object, not " + shown(value));
        return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }

    std::string textOr(const char *key) const { return has(key) ? text(key) : std::string(); }

    bool boolean(const char *key) const
    {
        const nlohmann::json &value = required(key);
        if (!value.is_boolean())
            throw FormatError(std::string("'") + key + "' must be true or false, not " + shown(value));
        return value.get<bool>();
    }

    std::string text(const char *key) const
    {
        const nlohmann::json &value = required(key);
        if (!value.is_string())
            throw FormatError(std::string("'") + key + "' must be a string, not " + shown(value));
        return value.get<std::string>();
    }

private:
    const nlohmann::json &m_object;
};

} // namespace optlog::Internal
