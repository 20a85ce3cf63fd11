// SPDX-License-Identifier: MIT
// A run filter as typed in the workbench's Runs list or `optlog runs --filter`: refused with a
// ConfigError naming the word, or matched against an engine run and a recorded run without fault.
#include "core/analysis/runfilter.h"
#include "core/config/recordedconfig.h"
#include "tests/fuzz/fuzzinput.h"

using namespace optlog;

namespace {

std::vector<RunRecord> sampleRuns()
{
    RunRecord engine;
    engine.id = 1;
    engine.name = "fp32 baseline";
    engine.formerNames = {"fp32"};
    engine.group = "fp32";
    engine.configToml = toToml(RunConfig{});
    engine.outcome = Outcome::Completed;
    engine.tags = {"long", "ok"};
    engine.note = "a spike at step 300, then calm";
    RunRecord recorded = engine;
    recorded.id = 2;
    recorded.name = "my trainer";
    recorded.configToml = recordedConfigToml(R"({"optimizer": {"lr": 0.0003, "name": "adamw"}, "amp": "bf16"})");
    recorded.outcome.reset();
    recorded.archived = true;
    return {engine, recorded};
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const std::vector<RunRecord> runs = sampleRuns();
    static const std::vector<std::string> keys = recordedConfigKeys(runs);
    RunFilter filter;
    try {
        filter = RunFilter::parse(fuzz::textOf(data, size), keys);
    } catch (const ConfigError &) {
        return 0;
    }
    for (const bool archived : {false, true}) {
        filter.setShowArchived(archived);
        for (const RunRecord &run : runs)
            filter.matches(run);
    }
    return 0;
}
