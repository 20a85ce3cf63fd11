// SPDX-License-Identifier: MIT
#include "core/config/config.h"
#include "core/engine/memory/countingallocator.h"
#include "core/engine/train/trainer.h"
#include "core/memorymodel/memorymodel.h"
#include "core/memorymodel/modelshape.h"
#include "core/recording/studyrecorder.h"
#include "core/store/store.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <QtTest>

using namespace optlog;

namespace {

RunConfig smoke()
{
    return loadRunConfig("smoke", "", {"data.corpus=generated", "train.steps=12"});
}

class Quiet : public TrainingObserver
{
public:
    std::atomic<bool> stop{false};
};

// Passes everything on to the study recorder, and lowers the budget to what is in use once
// `step` is done, as a long run on a shared machine might meet.
class SqueezeAfter : public TrainingObserver
{
public:
    SqueezeAfter(StudyRecorder &recorder, int64_t step)
        : m_recorder(recorder)
        , m_step(step)
    { }
    void step(const StepMetrics &m) override
    {
        m_recorder.step(m);
        if (m.step == m_step)
            CountingAllocator::instance().setBudget(CountingAllocator::instance().currentBytes() + 1024);
    }
    void validated(const ValidationPoint &p) override { m_recorder.validated(p); }
    void event(EventKind kind, const std::string &message, int64_t step) override
    {
        m_recorder.event(kind, message, step);
    }
    void numerics(const std::vector<TensorNumerics> &rows) override { m_recorder.numerics(rows); }
    std::atomic<bool> stop{false};

private:
    StudyRecorder &m_recorder;
    int64_t m_step;
};

} // namespace

class tst_Budget : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        CountingAllocator::install();
        at::set_num_threads(1);
    }
    void cleanup() { CountingAllocator::instance().setBudget(0); }
    void allocatorRefusesPastTheBudget();
    void firstAdamStepCanBreakABudgetTheBackwardFits();
    void metricsBeforeAnOomAreKept();
};

void tst_Budget::allocatorRefusesPastTheBudget()
{
    auto &allocator = CountingAllocator::instance();
    allocator.setBudget(allocator.currentBytes() + 1000);
    allocator.setPhase("forward");
    at::Tensor fits = at::empty({200}, at::kFloat); // 800 bytes
    try {
        at::Tensor over = at::empty({100}, at::kFloat); // 400 more: 1200 > 1000
        QFAIL("the budget did not refuse");
    } catch (const std::exception &) {
    }
    const auto refusal = allocator.refusal();
    QVERIFY(refusal);
    QCOMPARE(refusal->requestedBytes, int64_t(400));
    QCOMPARE(refusal->phase, std::string("forward"));
    QCOMPARE(refusal->budgetBytes - refusal->inUseBytes, int64_t(200));
    allocator.setPhase("setup");
    allocator.setBudget(0);
    QVERIFY(!allocator.refusal());
    at::Tensor now = at::empty({100}, at::kFloat); // no budget, no refusal
    QVERIFY(now.defined());
}

void tst_Budget::firstAdamStepCanBreakABudgetTheBackwardFits()
{
    // Short sequences and a wide model: few activations, many parameters.
    const RunConfig config = loadRunConfig("smoke", "",
                                           {"data.corpus=generated", "train.steps=12", "model.context_length=8",
                                            "model.width=64", "train.microbatch=1"});
    const MemoryEstimate estimate = estimateMemory(config);
    const int64_t adam = estimate.find(MemoryRole::OptimizerState)->bytes;
    const int64_t backwardPeak = estimate.peakBytes - adam;           // step 0 has no moments yet
    const int64_t optimizerNeeds = 16 * parameterCount(config.model); // weights, gradients, m and v
    QVERIFY(backwardPeak < optimizerNeeds);
    auto &allocator = CountingAllocator::instance();
    Trainer trainer(config, loadTokens(config.data, config.model.vocabSize, config.model.contextLength), 1234);
    const int64_t modelBytes = allocator.currentBytes();
    // The model is built (its weights count in both figures): between the two, the backward of
    // step 0 fits and Adam's moments at its optimizer step do not.
    allocator.setBudget(modelBytes - 4 * parameterCount(config.model) + (backwardPeak + optimizerNeeds) / 2);
    Quiet quiet;
    const TrainingOutcome outcome = trainer.run(quiet, quiet.stop);
    QCOMPARE(std::string(outcomeName(outcome.outcome)), std::string("oom"));
    QVERIFY(outcome.refusal);
    QCOMPARE(outcome.refusal->phase, std::string("optimizer step"));
    QCOMPARE(outcome.step, int64_t(0));
    QVERIFY2(QString::fromStdString(outcome.message).contains("out of memory budget in the optimizer step"),
             outcome.message.c_str());
}

void tst_Budget::metricsBeforeAnOomAreKept()
{
    QTemporaryDir dir;
    const RunConfig config = smoke();
    Store store(dir.filePath("study.sqlite").toStdString());
    const int64_t runId = store.createRun(config.name, toToml(config));
    StudyRecorder recorder(store, runId, config.train.steps, {});
    SqueezeAfter squeeze(recorder, 5);
    Trainer trainer(config, loadTokens(config.data, config.model.vocabSize, config.model.contextLength), 1234);
    const TrainingOutcome outcome = trainer.run(squeeze, squeeze.stop);
    recorder.finished(outcome);

    QCOMPARE(std::string(outcomeName(outcome.outcome)), std::string("oom"));
    QCOMPARE(outcome.step, int64_t(6));
    // Step 6's first allocation is its batch, drawn for the forward: the refusal names that phase,
    // not step 5's optimizer step, the last one entered before it.
    QVERIFY(outcome.refusal);
    QCOMPARE(outcome.refusal->phase, std::string("forward"));
    QVERIFY2(outcome.message.find("forward") != std::string::npos, outcome.message.c_str());
    Store reader(dir.filePath("study.sqlite").toStdString(), Store::Access::ReadOnly);
    QCOMPARE(reader.metrics(runId).size(), size_t(6)); // steps 0 to 5, none lost
    QCOMPARE(std::string(outcomeName(reader.runs().front().outcome)), std::string("oom"));
    QCOMPARE(reader.runs().front().outcomeStep, int64_t(6));
}

QTEST_APPLESS_MAIN(tst_Budget)
#include "tst_budget.moc"
