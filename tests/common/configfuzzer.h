// SPDX-License-Identifier: MIT
#pragma once
// A seeded generator of hostile config text: TOML documents and `--set` assignments built from the
// real fields (so that many get past the parser to the validation and the engine), with values of
// every TOML type and edge (huge, negative, NaN, control characters, paths to devices), near-miss
// keys, and random damage to the text. Seeded, so a failure is reproduced by its case number.

#include "core/config/config.h"
#include "core/config/configfields.h"

#include <cstdint>
#include <random>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace optlog::testing {

class ConfigFuzzer
{
public:
    explicit ConfigFuzzer(uint64_t seed)
        : m_random(seed)
    { }

    // "section.key=value", mostly well formed.
    std::string assignment()
    {
        std::string text = key() + "=" + value();
        return chance(10) ? damaged(text) : text;
    }

    // "section.key=value" with a value a user might well choose: the field's own type, near its
    // lower bound, or one of its choices. Such configs mostly run.
    std::string plausibleAssignment()
    {
        const ConfigField &field = anyField();
        RunConfig probe;
        std::string text;
        std::visit(
            [&](const auto &value) {
                using T = std::remove_pointer_t<std::decay_t<decltype(value)>>;
                if constexpr (std::is_same_v<T, bool>)
                    text = chance(2) ? "true" : "false";
                else if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, ChoiceRef>)
                    text = field.choices.empty() ? "\"fuzz\"" : "\"" + oneOf(field.choices) + "\"";
                else if constexpr (std::is_same_v<T, int64_t>)
                    text = std::to_string(int64_t(field.minimum) + int64_t(pick(4)));
                else
                    text = std::to_string(field.minimum
                                          + (field.maximum > field.minimum ? field.maximum - field.minimum : 1.0)
                                                * double(pick(100)) / 1000.0);
            },
            field.ref(probe));
        return field.path() + "=" + text;
    }

    // A TOML document of a few fields in their sections, sometimes damaged.
    std::string document()
    {
        std::string text;
        const int fields = int(pick(6)) + 1;
        for (int i = 0; i < fields; ++i) {
            const ConfigField &field = anyField();
            if (!field.section.empty())
                text += "[" + (chance(10) ? field.section + "x" : field.section) + "]\n";
            text += field.key + " = " + valueFor(field) + "\n";
        }
        if (chance(8))
            text += "[[run]]\nname = 1\n";
        return chance(5) ? damaged(text) : text;
    }

private:
    uint64_t pick(uint64_t n) { return m_random() % n; }
    bool chance(uint64_t oneIn) { return pick(oneIn) == 0; }
    template<typename T>
    const T &oneOf(const std::vector<T> &items)
    {
        return items[size_t(pick(items.size()))];
    }

    const ConfigField &anyField() { return oneOf(configFields()); }

    std::string key()
    {
        const std::string path = anyField().path();
        switch (pick(12)) {
        case 0: return path + "s";       // a near miss
        case 1: return "nosuch." + path; // an unknown section
        case 2: return "";               // no key at all
        default: return path;
        }
    }

    std::string value()
    {
        static const std::vector<std::string> values = {"0",
                                                        "1",
                                                        "-1",
                                                        "2",
                                                        "7",
                                                        "64",
                                                        "65536",
                                                        "2147483648",
                                                        "9223372036854775807",
                                                        "-9223372036854775808",
                                                        "99999999999999999999",
                                                        "0.0",
                                                        "-0.0",
                                                        "1e-300",
                                                        "1e308",
                                                        "inf",
                                                        "-inf",
                                                        "nan",
                                                        "0.5",
                                                        "3e-4",
                                                        "true",
                                                        "false",
                                                        "\"\"",
                                                        "\"fp32\"",
                                                        "\"autocast-bf16\"",
                                                        "\"master-bf16\"",
                                                        "\"autocast-fp16\"",
                                                        "\"cpu\"",
                                                        "\"cuda\"",
                                                        "\"naive\"",
                                                        "\"chunked\"",
                                                        "\"sdpa\"",
                                                        "\"generated\"",
                                                        "\"text\"",
                                                        "\"tokens\"",
                                                        "\"fortunes\"",
                                                        "\"64MiB\"",
                                                        "\"infGiB\"",
                                                        "\"0.5B\"",
                                                        "\"/dev/zero\"",
                                                        "\"/proc/self/mem\"",
                                                        "\"../../etc/passwd\"",
                                                        "\"a\\nb\"",
                                                        "\"\\u202E\"",
                                                        "\"\\u0000\"",
                                                        "\"\\u0007bell\"",
                                                        "'literal'",
                                                        "[1, 2]",
                                                        "{a = 1}",
                                                        "1979-05-27",
                                                        "\"" + std::string(300, 'x') + "\"",
                                                        "0x10",
                                                        "1_000",
                                                        "+5"};
        return oneOf(values);
    }

    // Mostly a value of the field's own type and range, sometimes anything.
    std::string valueFor(const ConfigField &field)
    {
        if (chance(3))
            return value();
        if (!field.choices.empty())
            return "\"" + oneOf(field.choices) + "\"";
        const double span = field.maximum > field.minimum ? field.maximum - field.minimum : 1000.0;
        const double x = field.minimum + span * double(pick(1001)) / 1000.0;
        return std::to_string(int64_t(x));
    }

    std::string damaged(std::string text)
    {
        static const std::string noise = "\"'[]{}=#\\\n\t\x01\xff\xc3.,";
        const int edits = int(pick(4)) + 1;
        for (int i = 0; i < edits && !text.empty(); ++i) {
            const size_t at = size_t(pick(text.size()));
            switch (pick(3)) {
            case 0: text.erase(at, 1); break;
            case 1: text.insert(at, 1, noise[size_t(pick(noise.size()))]); break;
            default: text[at] = noise[size_t(pick(noise.size()))]; break;
            }
        }
        return text;
    }

    std::mt19937_64 m_random;
};

} // namespace optlog::testing
