// SPDX-License-Identifier: MIT
// A study plan file (`optlog study PLAN`, the workbench's Queue study): every run's config is built
// and checked when the plan is read, so a plan is either refused with a ConfigError or each of its
// runs, and their seed replicates, makes the engine's command line.
#include "core/config/studyplan.h"
#include "tests/fuzz/fuzzinput.h"

using namespace optlog;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const fuzz::InputFile file(fuzz::textOf(data, size), ".toml");
    StudyPlan plan;
    try {
        plan = loadStudyPlan(file.path());
    } catch (const ConfigError &) {
        return 0;
    }
    for (const PlannedRun &run : plan.runs)
        for (const PlannedRun &replicate : replicatesOf(run))
            if (runArguments(replicate, "study.sqlite").empty())
                fuzz::broken("a planned run makes no command line");
    return 0;
}
