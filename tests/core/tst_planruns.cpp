// SPDX-License-Identifier: MIT
// planRuns: the one way from a study plan to the runs to train, for the CLI, Slurm and the workbench.
#include "core/analysis/planruns.h"
#include "core/config/configerror.h"
#include "core/store/store.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace optlog;

class tst_PlanRuns : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void aPlanRunIsDoneWhenCompletedWithTheSameConfig();
    void runsTheModelCannotTakeAreSkippedWithTheirReason();
    void aSkippedBaselineLeavesNothingToCompare();
};

namespace {

PlannedRun planned(const std::string &name, std::vector<std::string> overrides, int64_t repeats = 1)
{
    PlannedRun run;
    run.name = name;
    run.preset = "smoke";
    run.overrides = std::move(overrides);
    run.repeats = repeats;
    return run;
}

// A plan of a TorchScript module: the config's rules refuse chunked attention for any module; the
// module check (the engine's, in the CLI and the workbench) refuses checkpointing for this one.
StudyPlan modulePlan()
{
    const std::vector<std::string> module = {"model.source=torchscript", "model.path=/models/plain.pt"};
    const auto with = [&module](std::vector<std::string> more) {
        more.insert(more.begin(), module.begin(), module.end());
        return more;
    };
    StudyPlan plan;
    plan.name = "module";
    plan.baseline = "fp32";
    plan.runs = {planned("fp32", with({}), 2), planned("chunked", with({"memory.attention=chunked"})),
                 planned("checkpointed", with({"memory.checkpoint_every=1"})),
                 planned("bf16", with({"precision.mode=autocast-bf16"}))};
    plan.runs[3].baseline = "checkpointed";
    return plan;
}

void refuseCheckpointing(const RunConfig &config)
{
    if (config.memory.checkpointEvery > 0)
        throw NotApplicable("memory.checkpoint_every", "the module has no blocks to checkpoint");
}

} // namespace

void tst_PlanRuns::aPlanRunIsDoneWhenCompletedWithTheSameConfig()
{
    QTemporaryDir dir;
    Store store(dir.filePath("study.sqlite").toStdString());
    const StudyPlan plan = loadStudyPlan("default");
    QCOMPARE(plan.runs.size(), size_t(2));
    QCOMPARE(planRuns(plan, store.runs()).todo.size(), size_t(2));
    store.finishRun(store.createRun(plan.runs[0].name, toToml(plan.runs[0].config())), Outcome::Completed, 299, "");
    store.finishRun(store.createRun(plan.runs[1].name, toToml(plan.runs[1].config())), Outcome::Failed, 3, "boom");
    const PlanRuns runs = planRuns(plan, store.runs());
    QCOMPARE(runs.replicates.size(), size_t(2));
    QCOMPARE(runs.todo.size(), size_t(1));
    QCOMPARE(runs.todo[0].name, plan.runs[1].name); // the failed one runs again
    // The same name completed with another config (a changed preset, an override) runs again.
    PlannedRun changed = plan.runs[0];
    changed.overrides.push_back("train.steps=10");
    QCOMPARE(runsToDo({changed}, store.runs()).size(), size_t(1));
}

void tst_PlanRuns::runsTheModelCannotTakeAreSkippedWithTheirReason()
{
    const PlanRuns runs = planRuns(modulePlan(), {}, refuseCheckpointing);
    QCOMPARE(runs.skipped.size(), size_t(2));
    QCOMPARE(runs.skipped[0].name, std::string("chunked"));
    QVERIFY2(runs.skipped[0].reason.find("memory.attention = \"chunked\"") != std::string::npos,
             runs.skipped[0].reason.c_str());
    QCOMPARE(runs.skipped[1].name, std::string("checkpointed"));
    QCOMPARE(runs.skipped[1].reason, std::string("the module has no blocks to checkpoint"));
    // The rest, each as its replicates, all still to do in an empty study.
    QCOMPARE(runs.plan.runs.size(), size_t(2));
    std::vector<std::string> names;
    for (const auto &run : runs.todo)
        names.push_back(run.name);
    QCOMPARE(names, (std::vector<std::string>{"fp32 seed 1", "fp32 seed 2", "bf16"}));
    QCOMPARE(runs.replicates.size(), size_t(3));
    // bf16's own baseline was skipped: it is compared against the plan's, and the note says so.
    QCOMPARE(runs.plan.runs[1].baseline, std::string());
    QCOMPARE(runs.notes, std::vector<std::string>{"bf16 is compared against fp32, since its own baseline "
                                                  "checkpointed was skipped"});
    // Without a module check (the designer's), only the config's rules skip.
    QCOMPARE(planRuns(modulePlan(), {}).skipped.size(), size_t(1));
}

void tst_PlanRuns::aSkippedBaselineLeavesNothingToCompare()
{
    StudyPlan plan = modulePlan();
    plan.baseline = "checkpointed";
    try {
        planRuns(plan, {}, refuseCheckpointing);
        QFAIL("a plan whose baseline the model cannot take was planned");
    } catch (const NotApplicable &e) {
        QCOMPARE(e.field(), std::string("memory.checkpoint_every"));
        QVERIFY2(std::string(e.what()).find("the baseline run 'checkpointed' cannot apply to this model") == 0,
                 e.what());
    }
    // A broken module is no skip: the whole plan is refused.
    const auto broken = [](const RunConfig &) { throw ConfigError("model.path", "not a TorchScript file"); };
    QVERIFY_EXCEPTION_THROWN(planRuns(modulePlan(), {}, broken), ConfigError);
}

QTEST_APPLESS_MAIN(tst_PlanRuns)
#include "tst_planruns.moc"
