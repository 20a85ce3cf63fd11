// SPDX-License-Identifier: MIT
// `optlog fit`: the largest microbatch that fits a memory budget, then the next levers.
#include "app/commands.h"
#include "app/engine/relaunch.h"
#include "app/enginework.h"
#include "core/config/config.h"
#include "core/engine/run/fitsearch.h"

#include <cstdio>
#include <memory>

namespace optlog {

int fitCommand(const FitRequest &request, const Invocation &invocation)
{
    relaunchFor(invocation.argv, [&] { return loadRunConfig(request.preset, request.configFile, request.overrides); });
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

} // namespace optlog
