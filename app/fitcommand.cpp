// SPDX-License-Identifier: MIT
// `optlog fit`: its options. The search is the engine's (app/engine/fit.cpp).
#include "app/cli.h"
#include "app/commands.h"
#include "app/enginework.h"

#include <memory>

namespace optlog {

Command addFitCommand(CLI::App &app, const Invocation &invocation)
{
    auto request = std::make_shared<FitRequest>();
    CLI::App *command = app.add_subcommand("fit", "find the largest microbatch that fits a memory budget, verified "
                                                  "with real steps, then the next levers");
    addConfigOptions(command, request->preset, request->configFile, request->overrides);
    command->add_option("--memory-budget", request->budget, "the budget, e.g. 512MiB")->required();
    return {command, [request, invocation] {
                FitRequest &fit = *request;
                if (fit.configFile.empty() && fit.preset.empty())
                    fit.preset = "default";
                return fitCommand(fit, invocation);
            }};
}

} // namespace optlog
