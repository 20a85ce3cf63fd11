// SPDX-License-Identifier: MIT
#include "core/config/config.h"
#include "core/engine/compat/torchcompat.h"
#include "core/engine/memory/countingallocator.h"
#include "core/engine/precision/precision.h"
#include "core/engine/train/trainer.h"
#include "core/memorymodel/modelshape.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/optim/adamw.h>

#include <QtTest>

using namespace optlog;

namespace {

class Silent : public TrainingObserver
{
public:
    std::atomic<bool> stop{false};
};

RunConfig smokeWith(const QString &mode)
{
    return loadRunConfig("smoke", "", {"data.corpus=generated", "precision.mode=" + mode.toStdString()});
}

} // namespace

class tst_Precision : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        CountingAllocator::install();
        at::set_num_threads(1);
    }
    void eachModeTrainsWithItsDtypes_data();
    void eachModeTrainsWithItsDtypes();
    void cudaOnlyModesAreRefusedOnTheCpu_data();
    void cudaOnlyModesAreRefusedOnTheCpu();
    void autocastGuardNestsAndRestores();
    void injectedInfSkipsTheStepAndBacksOff();
    void nonFiniteGradientSkipsTheStepWithoutAScaler();
    void scaleGrowsAfterCleanSteps();
    void clippingSeesUnscaledGradients();
};

void tst_Precision::eachModeTrainsWithItsDtypes_data()
{
    QTest::addColumn<QString>("mode");
    QTest::addColumn<QString>("weights");
    QTest::addColumn<QString>("gradients");
    QTest::addColumn<QString>("master");
    QTest::addColumn<QString>("moments");
    QTest::addColumn<QString>("compute");
    QTest::newRow("fp32") << "fp32"
                          << "float32"
                          << "float32"
                          << "none"
                          << "float32"
                          << "float32";
    QTest::newRow("autocast-bf16") << "autocast-bf16"
                                   << "float32"
                                   << "float32"
                                   << "none"
                                   << "float32"
                                   << "bfloat16";
    QTest::newRow("master-bf16") << "master-bf16"
                                 << "bfloat16"
                                 << "bfloat16"
                                 << "float32"
                                 << "float32"
                                 << "bfloat16";
    QTest::newRow("pure-bf16") << "pure-bf16"
                               << "bfloat16"
                               << "bfloat16"
                               << "none"
                               << "bfloat16"
                               << "bfloat16";
}

void tst_Precision::eachModeTrainsWithItsDtypes()
{
    QFETCH(QString, mode);
    const RunConfig config = smokeWith(mode);
    Trainer trainer(config, loadTokens(config.data, config.model.vocabSize, config.model.contextLength), 1234);
    const double before = trainer.validate().loss;
    Silent observer;
    const TrainingOutcome outcome = trainer.run(observer, observer.stop);
    QCOMPARE(std::string(outcomeName(outcome.outcome)), std::string("completed"));
    const double after = trainer.validate().loss;
    QVERIFY2(after < before - 1.0, qPrintable(QString("%1 -> %2").arg(before).arg(after)));

    // Read from the tensors after training, not from the config.
    QFETCH(QString, weights);
    QFETCH(QString, gradients);
    QFETCH(QString, master);
    QFETCH(QString, moments);
    QFETCH(QString, compute);
    QCOMPARE(QString::fromStdString(outcome.dtypes.at("weights")), weights);
    QCOMPARE(QString::fromStdString(outcome.dtypes.at("gradients")), gradients);
    QCOMPARE(QString::fromStdString(outcome.dtypes.at("master_weights")), master);
    QCOMPARE(QString::fromStdString(outcome.dtypes.at("optimizer_state")), moments);
    QCOMPARE(QString::fromStdString(outcome.dtypes.at("compute")), compute);

    // The model-state bytes the table predicts are the bytes the tensors hold.
    for (const auto &predicted : predictedModelState(config)) {
        bool found = false;
        for (const auto &measured : outcome.measuredMemory)
            if (measured.role == predicted.role) {
                QCOMPARE(measured.bytes, predicted.bytes);
                QCOMPARE(measured.dtype, predicted.dtype);
                found = true;
            }
        QVERIFY2(found, memoryRoleName(predicted.role));
    }
}

void tst_Precision::cudaOnlyModesAreRefusedOnTheCpu_data()
{
    QTest::addColumn<QString>("mode");
    QTest::newRow("autocast-fp16") << "autocast-fp16";
    QTest::newRow("master-fp16") << "master-fp16";
}

void tst_Precision::cudaOnlyModesAreRefusedOnTheCpu()
{
    QFETCH(QString, mode);
    const auto expectRefusal = [](const ConfigError &e) {
        const QString message = e.what();
        QVERIFY2(message.contains("needs a CUDA device") && message.contains("no FP16 autocast")
                     && message.contains("runtime.device = \"cpu\"") && message.contains("use \"autocast-bf16\""),
                 e.what());
    };
    // Reading the config refuses it...
    try {
        smokeWith(mode);
        QFAIL("an FP16 mode on the CPU passed the config's rules");
    } catch (const ConfigError &e) {
        expectRefusal(e);
    }
    // ...and so does the trainer, for a config changed after it was read.
    RunConfig config = smokeWith("fp32");
    config.precision.mode = mode.toStdString();
    try {
        Trainer trainer(config, loadTokens(config.data, config.model.vocabSize, config.model.contextLength), 1234);
        QFAIL("an FP16 mode was accepted on the CPU");
    } catch (const ConfigError &e) {
        expectRefusal(e);
    }
}

void tst_Precision::autocastGuardNestsAndRestores()
{
    const at::Tensor a = at::randn({8, 8}), b = at::randn({8, 8});
    QVERIFY(!compat::autocastEnabled(c10::DeviceType::CPU));
    {
        AutocastGuard outer(c10::DeviceType::CPU, c10::kBFloat16);
        QCOMPARE(at::matmul(a, b).scalar_type(), c10::kBFloat16);
        QCOMPARE(at::softmax(a, -1).scalar_type(), c10::kFloat); // not a matmul-class op
        {
            AutocastGuard inner(c10::DeviceType::CPU, c10::kBFloat16);
            QCOMPARE(at::matmul(a, b).scalar_type(), c10::kBFloat16);
        }
        QVERIFY(compat::autocastEnabled(c10::DeviceType::CPU)); // the inner guard left the outer on
        {
            AutocastGuard off(c10::DeviceType::CPU, c10::kBFloat16, false); // a disabled guard does nothing
            QCOMPARE(at::matmul(a, b).scalar_type(), c10::kBFloat16);
        }
    }
    QVERIFY(!compat::autocastEnabled(c10::DeviceType::CPU));
    QCOMPARE(at::matmul(a, b).scalar_type(), c10::kFloat);
}

void tst_Precision::injectedInfSkipsTheStepAndBacksOff()
{
    LossScaler scaler(1024.0, 3);
    at::Tensor w = at::ones({4}).requires_grad_(true);
    torch::optim::AdamW optimizer({w}, torch::optim::AdamWOptions(0.1));
    scaler.scale((w * 2).sum()).backward();
    w.mutable_grad()[2] = INFINITY; // an overflow in one gradient
    const at::Tensor before = w.detach().clone();

    // The trainer's own guarded step: LibTorch's AdamW cannot skip on the device, so the host
    // reads whether to, once.
    HostSyncs syncs(w.device());
    const StepGate gate = stepUnlessNonFinite(optimizer, {w}, &scaler, 1.0, syncs);
    QCOMPARE(gate.skip.item<float>(), 1.0f);
    QCOMPARE(syncs.count(SyncPurpose::OptimizerSkip), int64_t(1));
    QVERIFY(at::equal(w.detach(), before)); // the weights are unchanged
    QCOMPARE(scaler.currentScale(), 512.0);
    QCOMPARE(scaler.skippedSteps(), int64_t(1));

    // The next clean step steps, and counts towards growth.
    w.mutable_grad() = at::full({4}, 2.0f * 512.0f);
    const StepGate next = stepUnlessNonFinite(optimizer, {w}, &scaler, 1.0, syncs);
    QCOMPARE(next.skip.item<float>(), 0.0f);
    QVERIFY(std::fabs(next.gradNorm.item<double>() - 4.0) < 1e-4); // the norm of the unscaled gradient (2, 2, 2, 2)
    QVERIFY(!at::equal(w.detach(), before));
    QCOMPARE(scaler.currentScale(), 512.0);
}

void tst_Precision::nonFiniteGradientSkipsTheStepWithoutAScaler()
{
    at::Tensor w = at::ones({3}).requires_grad_(true);
    torch::optim::AdamW optimizer({w}, torch::optim::AdamWOptions(0.1));
    w.mutable_grad() = at::tensor({1.0f, NAN, 1.0f});
    const at::Tensor before = w.detach().clone();
    HostSyncs syncs(w.device());
    QCOMPARE(stepUnlessNonFinite(optimizer, {w}, nullptr, 0.0, syncs).skip.item<float>(), 1.0f);
    QVERIFY(at::equal(w.detach(), before));
    QVERIFY(optimizer.state().empty()); // AdamW never saw it

    // optlog's own AdamW skips on its own, without a host read.
    FusedAdamW fused({w}, torch::optim::AdamWOptions(0.1));
    QCOMPARE(stepUnlessNonFinite(fused, {w}, nullptr, 0.0, syncs).skip.item<float>(), 1.0f);
    QVERIFY(at::equal(w.detach(), before));
    QVERIFY(fused.state().empty());
    QCOMPARE(syncs.total(), int64_t(1)); // LibTorch's step's read above, none since
}

void tst_Precision::scaleGrowsAfterCleanSteps()
{
    LossScaler scaler(1024.0, 3);
    const at::Tensor clean = at::zeros({}), overflow = at::ones({});
    scaler.update(clean);
    scaler.update(clean);
    QCOMPARE(scaler.currentScale(), 1024.0);
    scaler.update(clean);
    QCOMPARE(scaler.currentScale(), 2048.0);
    scaler.update(overflow); // an overflow resets the count of clean steps
    scaler.update(clean);
    scaler.update(clean);
    QCOMPARE(scaler.currentScale(), 1024.0);
    scaler.update(clean);
    QCOMPARE(scaler.currentScale(), 2048.0);
    QCOMPARE(scaler.skippedSteps(), int64_t(1));
}

void tst_Precision::clippingSeesUnscaledGradients()
{
    LossScaler scaler(1024.0);
    at::Tensor w = at::zeros({2}).requires_grad_(true);
    // A true gradient of (3, 4), norm 5, as backward leaves it: multiplied by the scale.
    w.mutable_grad() = at::tensor({3.0f, 4.0f}) * 1024.0;
    const StepGate gate = gradientGate({w}, &scaler, 1.0);
    QCOMPARE(gate.skip.item<float>(), 0.0f);
    QVERIFY(std::fabs(gate.gradNorm.item<double>() - 5.0) < 1e-4); // the norm of the unscaled gradient, not 5120
    // The factor the step multiplies the gradients by: unscaled, then clipped to the threshold.
    const at::Tensor gated = w.grad() * gate.factor;
    QVERIFY(std::fabs(gated.norm().item<double>() - 1.0) < 1e-4);
    QVERIFY(std::fabs(gated[0].item<double>() - 0.6) < 1e-4);
}

QTEST_APPLESS_MAIN(tst_Precision)
#include "tst_precision.moc"
