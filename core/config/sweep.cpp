// SPDX-License-Identifier: MIT
#include "core/config/sweep.h"

#include "core/config/config.h"

namespace optlog {

namespace {

std::string trimmed(const std::string &text)
{
    const auto first = text.find_first_not_of(" \t");
    if (first == std::string::npos)
        return {};
    const auto last = text.find_last_not_of(" \t");
    return text.substr(first, last - first + 1);
}

// "train.microbatch" -> "microbatch": run names stay short enough for a table column.
std::string shortKey(const std::string &key)
{
    const auto dot = key.rfind('.');
    return dot == std::string::npos ? key : key.substr(dot + 1);
}

} // namespace

std::vector<std::string> splitSweepValues(const std::string &commaSeparated)
{
    std::vector<std::string> values;
    std::string::size_type start = 0;
    while (start <= commaSeparated.size()) {
        const auto comma = commaSeparated.find(',', start);
        const std::string value = trimmed(
            commaSeparated.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (!value.empty())
            values.push_back(value);
        if (comma == std::string::npos)
            break;
        start = comma + 1;
    }
    return values;
}

std::vector<PlannedRun> expandSweep(const PlannedRun &base, const std::vector<SweepAxis> &axes)
{
    std::vector<PlannedRun> runs = {base};
    for (const auto &axis : axes) {
        if (axis.values.empty())
            continue;
        std::vector<PlannedRun> expanded;
        for (const auto &run : runs) {
            for (const auto &value : axis.values) {
                PlannedRun next = run;
                next.name += " " + shortKey(axis.key) + "=" + value;
                next.overrides.push_back(axis.key + "=" + value);
                expanded.push_back(std::move(next));
            }
        }
        runs = std::move(expanded);
    }
    for (const auto &run : runs) {
        try {
            run.config();
        } catch (const NotApplicable &) {
            // Kept: planRuns leaves out a point the model cannot take, and says why.
        } catch (const ConfigError &e) {
            throw ConfigError(e.field(), "sweep run '" + run.name + "': " + e.what());
        }
    }
    return runs;
}

} // namespace optlog
