// SPDX-License-Identifier: MIT
#include "app/cli.h"

#include "core/config/presets.h"

#include <cmath>
#include <cstdlib>

namespace optlog {

void addConfigOptions(CLI::App *command, std::string &preset, std::string &configFile,
                      std::vector<std::string> &overrides)
{
    command->add_option("--config", configFile,
                        "TOML config (sections model, data, train, precision, memory, "
                        "runtime)");
    std::string presets;
    for (const auto &name : presetNames())
        presets += (presets.empty() ? "" : ", ") + name;
    command->add_option("--preset", preset, "built-in preset applied before --config: " + presets)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    command->add_option("--set", overrides, "override a field, e.g. --set train.steps=100 (repeatable)");
}

CLI::Validator toleranceCheck()
{
    return CLI::Validator(
        [](std::string &text) -> std::string {
            char *end = nullptr;
            const double value = std::strtod(text.c_str(), &end);
            if (end == text.c_str() || *end != '\0' || !std::isfinite(value) || value < 0)
                return "--tolerance " + text + ": must be a finite number of nats per token, 0 or more (such as 0.02)";
            return "";
        },
        "NATS");
}

void refuseEmptyValues(CLI::App &app)
{
    for (CLI::Option *option : app.get_options()) {
        if (option->get_expected_max() == 0 || !option->nonpositional())
            continue; // a flag takes no value; an argument is required, and its command says what is wrong
        option->check(CLI::Validator(
            [](std::string &text) -> std::string {
                return text.empty() ? "an empty value: leave it out for its default, or give one" : "";
            },
            ""));
    }
    for (CLI::App *command : app.get_subcommands({}))
        refuseEmptyValues(*command);
}

} // namespace optlog
