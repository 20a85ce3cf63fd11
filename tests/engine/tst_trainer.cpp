// SPDX-License-Identifier: MIT
#include "core/config/config.h"
#include "core/engine/compat/torchcompat.h"
#include "core/engine/memory/countingallocator.h"
#include "core/engine/train/trainer.h"
#include "core/memorymodel/modelshape.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/utils.h>

#include <QtTest>

using namespace optlog;

namespace {

// Keeps everything the trainer reports; can ask it to stop after a given step.
class Recording : public TrainingObserver
{
public:
    std::vector<StepMetrics> steps;
    std::vector<ValidationPoint> validations;
    int64_t stopAfter = -1;
    std::atomic<bool> stop{false};

    void step(const StepMetrics &m) override
    {
        steps.push_back(m);
        if (m.step == stopAfter)
            stop.store(true);
    }
    void validated(const ValidationPoint &p) override { validations.push_back(p); }
};

RunConfig smoke(const std::vector<std::string> &overrides = {})
{
    std::vector<std::string> all = {"data.corpus=generated", "train.steps=12", "train.eval_interval=4"};
    all.insert(all.end(), overrides.begin(), overrides.end()); // the test's own come last and win
    return loadRunConfig("smoke", "", all);
}

std::vector<double> losses(const RunConfig &config)
{
    Trainer trainer(config, loadTokens(config.data, config.model.vocabSize, config.model.contextLength), 1234);
    Recording recording;
    trainer.run(recording, recording.stop);
    std::vector<double> out;
    for (const auto &s : recording.steps)
        out.push_back(s.trainLoss);
    return out;
}

const MemoryRow &row(const std::vector<MemoryRow> &rows, const std::string &role)
{
    for (const auto &r : rows)
        if (memoryRoleName(r.role) == role)
            return r;
    throw std::runtime_error("no role " + role);
}

} // namespace

class tst_Trainer : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        CountingAllocator::install();
        at::set_num_threads(1);
    }
    void learningRateWarmsUpThenDecays();
    void sameSeedGivesTheSameLosses();
    void smokeTrainsAndValidationLossDrops();
    void dropoutTrainsAndValidatesWithoutIt();
    void nonFiniteLossEndsTheRunAsDiverged();
    void stopRequestEndsBetweenSteps();
    void nonFiniteGradientSkipsStepsAndSaysSo();
    void warmupStepsAreLeftOutOfThePeak();
    void measuredModelStateEqualsThePrediction();
};

void tst_Trainer::learningRateWarmsUpThenDecays()
{
    TrainConfig t;
    t.learningRate = 1e-3;
    t.minLearningRate = 1e-4;
    t.warmupSteps = 10;
    t.steps = 110;
    QCOMPARE(learningRateAt(t, 0), 1e-4);
    QCOMPARE(learningRateAt(t, 9), 1e-3);
    QCOMPARE(learningRateAt(t, 10), 1e-3);
    QVERIFY(std::fabs(learningRateAt(t, 109) - 1e-4) < 1e-12);
    QVERIFY(learningRateAt(t, 60) < 1e-3 && learningRateAt(t, 60) > 1e-4);
}

void tst_Trainer::sameSeedGivesTheSameLosses()
{
    const auto first = losses(smoke());
    const auto second = losses(smoke());
    const auto otherSeed = losses(smoke({"train.seed=2"}));
    QCOMPARE(first.size(), size_t(12));
    QVERIFY(first == second); // bitwise, on one thread
    QVERIFY(first != otherSeed);
    // The diagnostics only read the tensors: with dropout on (its generator would notice a
    // forward that consumed it) the losses are the same bitwise with them and without.
    const auto dropout = std::vector<std::string>{"model.dropout=0.1", "diagnostics.numerics_every=3"};
    std::vector<std::string> without = dropout;
    without.push_back("diagnostics.numerics=false");
    std::vector<std::string> with = dropout;
    with.push_back("diagnostics.numerics=true");
    QVERIFY(losses(smoke(with)) == losses(smoke(without)));
}

void tst_Trainer::smokeTrainsAndValidationLossDrops()
{
    const RunConfig config = smoke({"train.steps=40", "train.eval_interval=20"});
    Trainer trainer(config, loadTokens(config.data, config.model.vocabSize, config.model.contextLength), 1234);
    const double before = trainer.validate().loss;
    Recording recording;
    const TrainingOutcome outcome = trainer.run(recording, recording.stop);
    QCOMPARE(std::string(outcomeName(outcome.outcome)), std::string("completed"));
    QCOMPARE(recording.validations.size(), size_t(2));
    QCOMPARE(recording.validations.back().tokens, int64_t(40 * 4 * 32));
    QVERIFY2(recording.validations.back().loss < before - 1.0,
             qPrintable(QString("validation %1 -> %2").arg(before).arg(recording.validations.back().loss)));
}

void tst_Trainer::dropoutTrainsAndValidatesWithoutIt()
{
    const RunConfig config = smoke({"model.dropout=0.1"});
    Trainer trainer(config, loadTokens(config.data, config.model.vocabSize, config.model.contextLength), 1234);
    // Validation runs in eval mode: dropout off, so two validations give the same loss.
    QCOMPARE(trainer.validate().loss, trainer.validate().loss);
    Recording recording;
    QCOMPARE(std::string(outcomeName(trainer.run(recording, recording.stop).outcome)), std::string("completed"));
}

void tst_Trainer::nonFiniteLossEndsTheRunAsDiverged()
{
    const RunConfig config = smoke();
    Trainer trainer(config, loadTokens(config.data, config.model.vocabSize, config.model.contextLength), 1234);
    {
        compat::GradDisabledGuard noGrad;
        trainer.model().parameterTensors().front().fill_(std::numeric_limits<float>::quiet_NaN());
    }
    Recording recording;
    const TrainingOutcome outcome = trainer.run(recording, recording.stop);
    QCOMPARE(std::string(outcomeName(outcome.outcome)), std::string("diverged"));
    QCOMPARE(outcome.step, int64_t(0));
    QCOMPARE(recording.steps.size(), size_t(1)); // the step that diverged is recorded
}

void tst_Trainer::nonFiniteGradientSkipsStepsAndSaysSo()
{
    // FP32, no loss scaler. One feature of the final LayerNorm's gain is 1e37 while the tied head
    // reads nothing from it (that column of the embedding is zero): the logits and the loss stay
    // finite, but the head's gradient there is about 1e37 and its square overflows the norm.
    const RunConfig config = smoke({"train.steps=3", "memory.warmup_steps=1"});
    Trainer trainer(config, loadTokens(config.data, config.model.vocabSize, config.model.contextLength), 1234);
    at::Tensor gain;
    {
        compat::GradDisabledGuard noGrad;
        for (auto &[name, tensor] : trainer.model().namedParameters()) {
            if (name == "token_embedding.weight")
                tensor.select(1, 0).zero_();
            if (name == "final_norm.weight") {
                tensor[0] = 1e37f;
                gain = tensor;
            }
        }
    }
    QVERIFY(gain.defined());
    const at::Tensor before = gain.detach().clone();
    struct Events : Recording
    {
        std::vector<std::string> warnings;
        void event(EventKind kind, const std::string &message, int64_t) override
        {
            if (kind == EventKind::Warning)
                warnings.push_back(message);
        }
    } recording;
    const TrainingOutcome outcome = trainer.run(recording, recording.stop);
    QCOMPARE(std::string(outcomeName(outcome.outcome)), std::string("completed"));
    QCOMPARE(recording.steps.size(), size_t(3));
    for (const auto &m : recording.steps) {
        QVERIFY(std::isfinite(m.trainLoss));
        QVERIFY(m.skipped); // recorded as skipped, not as a step taken
        QVERIFY(std::isnan(m.gradNorm));
    }
    QVERIFY(at::equal(gain.detach(), before)); // no optimizer step touched the weights
    QCOMPARE(recording.warnings.size(), size_t(3));
    QVERIFY2(recording.warnings.front().find("step 0 skipped its optimizer step") != std::string::npos,
             recording.warnings.front().c_str());
    QVERIFY(recording.warnings.front().find("inf or NaN") != std::string::npos);
}

void tst_Trainer::warmupStepsAreLeftOutOfThePeak()
{
    // An observer that allocates 64 MiB while one step is on, far above this run's own peak (about
    // 1 MiB). With two warm-up steps the peak must not see it in step 1, and must in step 2.
    struct Spike : Recording
    {
        int64_t at = 0;
        void step(const StepMetrics &m) override
        {
            Recording::step(m);
            if (m.step == at)
                at::empty({64 << 20}, at::kByte).fill_(1);
        }
    };
    const auto peakWithSpikeAt = [](int64_t step) {
        const RunConfig config = smoke({"train.steps=4", "memory.warmup_steps=2"});
        Trainer trainer(config, loadTokens(config.data, config.model.vocabSize, config.model.contextLength), 1234);
        Spike spike;
        spike.at = step;
        return row(trainer.run(spike, spike.stop).measuredMemory, "peak").bytes;
    };
    const int64_t inWarmup = peakWithSpikeAt(1);
    const int64_t measured = peakWithSpikeAt(2);
    QVERIFY2(inWarmup < (16 << 20), qPrintable(QString::number(inWarmup)));
    QVERIFY2(measured > (64 << 20), qPrintable(QString::number(measured)));
}

void tst_Trainer::stopRequestEndsBetweenSteps()
{
    const RunConfig config = smoke();
    Trainer trainer(config, loadTokens(config.data, config.model.vocabSize, config.model.contextLength), 1234);
    Recording recording;
    recording.stopAfter = 5;
    const TrainingOutcome outcome = trainer.run(recording, recording.stop);
    QCOMPARE(std::string(outcomeName(outcome.outcome)), std::string("cancelled"));
    QCOMPARE(outcome.step, int64_t(5));
    QCOMPARE(recording.steps.size(), size_t(6));
}

void tst_Trainer::measuredModelStateEqualsThePrediction()
{
    const RunConfig config = smoke();
    Trainer trainer(config, loadTokens(config.data, config.model.vocabSize, config.model.contextLength), 1234);
    Recording recording;
    const TrainingOutcome outcome = trainer.run(recording, recording.stop);
    const auto predicted = predictedModelState(config);
    for (const std::string role : {"parameters", "gradients", "optimizer_state"}) {
        QCOMPARE(row(outcome.measuredMemory, role).bytes, row(predicted, role).bytes);
        QCOMPARE(row(outcome.measuredMemory, role).dtype, std::string("float32"));
    }
    const int64_t modelState = 16 * parameterCount(config.model);
    QVERIFY(row(outcome.measuredMemory, "peak").bytes > modelState);
    QVERIFY(row(outcome.measuredMemory, "saved_activations").bytes > 0);
    QVERIFY(row(outcome.measuredMemory, "peak_rss").bytes > row(outcome.measuredMemory, "peak").bytes);
}

QTEST_APPLESS_MAIN(tst_Trainer)
#include "tst_trainer.moc"
