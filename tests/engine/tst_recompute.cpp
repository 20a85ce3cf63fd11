// SPDX-License-Identifier: MIT
#include "core/config/config.h"
#include "core/engine/compat/torchcompat.h"
#include "core/engine/memory/countingallocator.h"
#include "core/engine/model/gpt.h"
#include "core/engine/precision/precision.h"
#include "core/engine/train/trainer.h"
#include "tests/common/gradientcheck.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/utils.h>

#include <QtTest>

using namespace optlog;
using optlog::testing::largestDifference;

namespace {

GPTOptions shape(int64_t layers, double dropout, int64_t context = 32)
{
    return GPTOptions(256, context, 32, layers, 2).dropout(dropout);
}

std::vector<at::Tensor> gradients(const GPTOptions &options, const at::Tensor &inputs, const PrecisionPlan &plan = {})
{
    return testing::oneStepGradients(options, inputs, plan);
}

// Allocator bytes held after the forward pass, before backward: the saved activations.
int64_t savedBytes(const GPTOptions &options, const at::Tensor &inputs)
{
    GPT model(options);
    auto &allocator = CountingAllocator::instance();
    const int64_t before = allocator.currentBytes();
    at::Tensor loss = model->loss(inputs, inputs);
    return allocator.currentBytes() - before;
}

// Peak allocator bytes over a forward and backward pass, above what was held before it.
int64_t stepPeak(const GPTOptions &options, const at::Tensor &inputs)
{
    GPT model(options);
    auto &allocator = CountingAllocator::instance();
    const int64_t before = allocator.currentBytes();
    allocator.resetPeak();
    model->loss(inputs, inputs).backward();
    return allocator.peakBytes() - before;
}

} // namespace

class tst_Recompute : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        CountingAllocator::install();
        at::set_num_threads(1);
    }
    void gradientsEqualThePlainRun_data();
    void gradientsEqualThePlainRun();
    void worksUnderAutocast();
    void savedActivationsDropForADeepModel();
    void chunkedAttentionEqualsNaive();
    void chunkedAttentionPeakIsLowerAndTheGapGrowsWithT();
};

void tst_Recompute::gradientsEqualThePlainRun_data()
{
    QTest::addColumn<double>("dropout");
    QTest::addColumn<int>("every");
    QTest::newRow("every block, no dropout") << 0.0 << 1;
    QTest::newRow("every block, dropout 0.2") << 0.2 << 1;
    QTest::newRow("every 2nd block, dropout 0.2") << 0.2 << 2;
}

void tst_Recompute::gradientsEqualThePlainRun()
{
    QFETCH(double, dropout);
    QFETCH(int, every);
    const at::Tensor inputs = at::randint(0, 256, {4, 32}, at::kLong);
    const auto plain = gradients(shape(3, dropout), inputs);
    const auto checkpointed = gradients(shape(3, dropout).checkpoint_every(every), inputs);
    const double worst = largestDifference(plain, checkpointed);
    QVERIFY2(worst < 1e-6, qPrintable(QString("largest gradient difference %1").arg(worst)));
    QVERIFY(plain.front().abs().sum().item<double>() > 0);
}

void tst_Recompute::worksUnderAutocast()
{
    const at::Tensor inputs = at::randint(0, 256, {4, 32}, at::kLong);
    const PrecisionPlan plan = precisionPlan("autocast-bf16");
    const auto plain = gradients(shape(2, 0.0), inputs, plan);
    const auto checkpointed = gradients(shape(2, 0.0).checkpoint_every(1), inputs, plan);
    // The recomputation runs under the forward's autocast state, so it casts the same way.
    const double worst = largestDifference(plain, checkpointed);
    QVERIFY2(worst < 1e-6, qPrintable(QString("largest gradient difference %1").arg(worst)));
}

void tst_Recompute::savedActivationsDropForADeepModel()
{
    const at::Tensor inputs = at::randint(0, 256, {4, 64}, at::kLong);
    const int64_t plain = savedBytes(shape(8, 0.0, 64), inputs);
    const int64_t every = savedBytes(shape(8, 0.0, 64).checkpoint_every(1), inputs);
    const int64_t everySecond = savedBytes(shape(8, 0.0, 64).checkpoint_every(2), inputs);
    QVERIFY2(every < plain / 3, qPrintable(QString("%1 vs %2").arg(every).arg(plain)));
    QVERIFY(every < everySecond && everySecond < plain);
}

void tst_Recompute::chunkedAttentionEqualsNaive()
{
    const at::Tensor inputs = at::randint(0, 256, {2, 48}, at::kLong);
    const auto naive = gradients(shape(2, 0.0, 48), inputs);
    const auto chunked = gradients(shape(2, 0.0, 48).attention_chunk(16), inputs);
    const auto uneven = gradients(shape(2, 0.0, 48).attention_chunk(20), inputs); // a short last chunk
    QVERIFY2(largestDifference(naive, chunked) < 1e-5, qPrintable(QString::number(largestDifference(naive, chunked))));
    QVERIFY(largestDifference(naive, uneven) < 1e-5);

    torch::manual_seed(5);
    GPT a(shape(2, 0.0, 48));
    torch::manual_seed(5);
    GPT b(shape(2, 0.0, 48).attention_chunk(16));
    compat::GradDisabledGuard noGrad;
    QVERIFY(at::allclose(a->forward(inputs), b->forward(inputs), 1e-5, 1e-5));
}

void tst_Recompute::chunkedAttentionPeakIsLowerAndTheGapGrowsWithT()
{
    const auto gap = [](int64_t T) {
        const at::Tensor inputs = at::randint(0, 256, {2, T}, at::kLong);
        const int64_t naive = stepPeak(GPTOptions(256, T, 32, 1, 4), inputs);
        const int64_t chunked = stepPeak(GPTOptions(256, T, 32, 1, 4).attention_chunk(64), inputs);
        qInfo("T=%lld: peak naive %lld bytes, chunked %lld bytes", static_cast<long long>(T),
              static_cast<long long>(naive), static_cast<long long>(chunked));
        return naive - chunked;
    };
    const int64_t at256 = gap(256), at512 = gap(512);
    QVERIFY(at512 > 0);
    QVERIFY(at512 > at256);
}

QTEST_APPLESS_MAIN(tst_Recompute)
#include "tst_recompute.moc"
