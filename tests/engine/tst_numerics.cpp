// SPDX-License-Identifier: MIT
#include "core/engine/compat/torchcompat.h"
#include "core/engine/train/numerics.h"

#include <ATen/ATen.h>
#include <torch/optim/adamw.h>

#include <QtTest>

using namespace optlog;

namespace {

at::Tensor values(std::vector<float> v)
{
    return at::tensor(v, at::kFloat);
}

} // namespace

class tst_Numerics : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void gradientFractionsCountedByHand();
    void theScaleADynamicScalerHolds();
    void vanishingUpdatesCountedByHand();
    void vanishingUpdatesAgreeWithBf16Arithmetic();
    void adamwUpdateIsTheStepAdamwTook();
};

void tst_Numerics::gradientFractionsCountedByHand()
{
    // Of eight elements: two below 2^-24 (lost), two from 2^-24 up to 2^-14 (subnormal), the
    // zero in neither.
    const at::Tensor g = values({0.f, 1e-8f, -3e-8f, 0x1p-24f, 1e-5f, -1e-3f, 0.25f, 2.f});
    const TensorNumerics unscaled = gradientNumerics(g, 1);
    QCOMPARE(unscaled.fp16Underflow, 2.0 / 8);
    QCOMPARE(unscaled.fp16Subnormal, 2.0 / 8);
    QCOMPARE(unscaled.scaledUnderflow, 2.0 / 8);
    // Times two, 1e-8 is still below 2^-24 (5.96e-8), 3e-8 no longer is.
    QCOMPARE(gradientNumerics(g, 2).scaledUnderflow, 1.0 / 8);
    QCOMPARE(gradientNumerics(g, 1024).scaledUnderflow, 0.0);
    QCOMPARE(gradientNumerics(g, 1024).lossScale, 1024.0);
    // A BF16 gradient is measured as it is.
    QCOMPARE(gradientNumerics(g.to(at::kBFloat16), 1).fp16Underflow, 2.0 / 8);
}

void tst_Numerics::theScaleADynamicScalerHolds()
{
    QCOMPARE(dynamicLossScale(2), 16384.0); // 2 · 2^14 = 32768 fits, 2 · 2^15 = 65536 does not
    QCOMPARE(dynamicLossScale(65504), 1.0);
    QCOMPARE(dynamicLossScale(65504.0 / 8), 8.0); // exactly at the edge is still in range
    QCOMPARE(dynamicLossScale(1e5), 0.5);
    QCOMPARE(dynamicLossScale(1e-9), kLargestLossScale);
    QCOMPARE(dynamicLossScale(0), kLargestLossScale);
    QCOMPARE(dynamicLossScale(std::nan("")), kLargestLossScale);
}

void tst_Numerics::vanishingUpdatesCountedByHand()
{
    // Half a BF16 ulp: of 1.0 it is 2^-8 (0.0039), of 0.25 it is 2^-10 (0.00098), of -3 it is
    // 2^-7 (0.0078). A zero weight takes any update.
    const at::Tensor weight = values({1.f, 1.f, 0.25f, 0.25f, 0.f, -3.f});
    const at::Tensor update = values({0.001f, 0.01f, 0.001f, 0.0009f, 0.001f, -0.005f});
    QCOMPARE(vanishingUpdateFraction(weight, update), 3.0 / 6);
}

void tst_Numerics::vanishingUpdatesAgreeWithBf16Arithmetic()
{
    // An independent reference: add each update to its BF16 weight in BF16 and see which are
    // lost. Weights are BF16 values; updates exactly at half an ulp (ties) are too rare to matter.
    at::manual_seed(7);
    const at::Tensor weight = (at::randn({20000}) * 0.05).to(at::kBFloat16);
    const at::Tensor update = at::randn({20000}) * at::exp2(at::rand({20000}) * -16 - 4);
    const at::Tensor sum = (weight.to(at::kFloat) + update).to(at::kBFloat16);
    const double lostInBf16 = (sum == weight).to(at::kDouble).mean().item<double>();
    const double fraction = vanishingUpdateFraction(weight, update);
    QVERIFY2(lostInBf16 > 0.2 && lostInBf16 < 0.8, qPrintable(QString::number(lostInBf16))); // a real mix
    QVERIFY2(std::abs(fraction - lostInBf16) < 1e-3,
             qPrintable(QString("predicted %1, lost in BF16 %2").arg(fraction).arg(lostInBf16)));
}

void tst_Numerics::adamwUpdateIsTheStepAdamwTook()
{
    at::manual_seed(3);
    at::Tensor weight = at::randn({64, 32}).requires_grad_(true);
    auto options = torch::optim::AdamWOptions(3e-3).betas({0.9, 0.95}).eps(1e-8).weight_decay(0.1);
    torch::optim::AdamW optimizer({weight}, options);
    for (int step = 0; step < 3; ++step) {
        weight.mutable_grad() = at::randn({64, 32}) * 0.1;
        const at::Tensor before = weight.detach().clone();
        optimizer.step();
        const auto &state = static_cast<const torch::optim::AdamWParamState &>(
            *optimizer.state().at(compat::optimizerStateKey(weight)));
        // The decay applies to the weight before the step; after it the weight moved by about
        // lr², so compare with a tolerance well under the update itself (about 3e-3).
        const at::Tensor taken = weight.detach() - before;
        const at::Tensor predicted = adamwUpdate(before, state, options);
        const double worst = (taken - predicted).abs().max().item<double>();
        QVERIFY2(worst < 1e-6, qPrintable(QString("step %1: worst difference %2").arg(step).arg(worst)));
        QVERIFY(taken.abs().mean().item<double>() > 1e-3); // the comparison is not of zeros
    }
}

QTEST_APPLESS_MAIN(tst_Numerics)
#include "tst_numerics.moc"
