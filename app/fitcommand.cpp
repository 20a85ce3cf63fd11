// SPDX-License-Identifier: MIT
// `optlog fit`: the largest microbatch that fits a memory budget, then the next levers.
#include "app/cli.h"
#include "app/commands.h"
#include "core/config/config.h"
#include "core/engine/run/fitsearch.h"

#include <cstdio>
#include <memory>

namespace optlog {

int fitCommand(const FitRequest &request)
{
    std::unique_ptr<FitSearch> search;
    if (const int refused = refuseBadInput("fit", [&] {
            search = std::make_unique<FitSearch>(loadRunConfig(request.preset, request.configFile, request.overrides),
                                                 parseBytes(request.budget, "--memory-budget"));
        }))
        return refused;
    const FitResult result = search->run([](const std::string &line) {
        std::fputs(line.c_str(), stdout);
        std::fflush(stdout); // a search takes a while: each line as it is found
    });
    return result.chosenMicrobatch ? kExitOk : kExitOutOfBudget;
}

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
                relaunchFor(invocation.argv, [&] { return loadRunConfig(fit.preset, fit.configFile, fit.overrides); });
                return fitCommand(fit);
            }};
}

} // namespace optlog
