// SPDX-License-Identifier: MIT
#include "core/config/config.h"
#include "core/engine/memory/countingallocator.h"
#include "core/engine/model/gpt.h"
#include "core/engine/train/memorymeter.h"

#include <ATen/ATen.h>
#include <torch/optim/adamw.h>

#include <QtTest>

using namespace optlog;

class tst_CountingAllocator : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { CountingAllocator::install(); }
    void knownAllocationIsCountedExactly();
    void rawAllocationRoundTrips();
    void survivesMatmulGeluSoftmaxPaths();
    void peakAfterFirstOptimizerStepCoversModelState();
    void uncountedScopeLeavesNoTrace();
    void meterMeasuresTheFirstForwardAfterWarmup();
};

void tst_CountingAllocator::knownAllocationIsCountedExactly()
{
    auto &allocator = CountingAllocator::instance();
    const int64_t before = allocator.currentBytes();
    allocator.resetPeak();
    {
        at::Tensor t = at::empty({1000, 3}, at::kFloat);
        QCOMPARE(allocator.currentBytes() - before, int64_t(12000));
        at::Tensor u = at::empty({7}, at::kDouble);
        QCOMPARE(allocator.currentBytes() - before, int64_t(12056));
    }
    QCOMPARE(allocator.currentBytes(), before);
    QCOMPARE(allocator.peakBytes() - before, int64_t(12056));
    allocator.resetPeak();
    QCOMPARE(allocator.peakBytes(), before);
}

void tst_CountingAllocator::rawAllocationRoundTrips()
{
    // LibTorch asserts that a DataPtr's context is its data pointer for raw allocations.
    auto &allocator = CountingAllocator::instance();
    const int64_t before = allocator.currentBytes();
    void *p = allocator.raw_allocate(333);
    QVERIFY(p != nullptr);
    QCOMPARE(reinterpret_cast<uintptr_t>(p) % 64, uintptr_t(0));
    QCOMPARE(allocator.currentBytes() - before, int64_t(333));
    allocator.raw_deallocate(p);
    QCOMPARE(allocator.currentBytes(), before);
}

void tst_CountingAllocator::survivesMatmulGeluSoftmaxPaths()
{
    auto &allocator = CountingAllocator::instance();
    const int64_t before = allocator.currentBytes();
    allocator.resetPeak();
    {
        at::Tensor a = at::randn({64, 128}).set_requires_grad(true);
        at::Tensor b = at::randn({128, 96}).set_requires_grad(true);
        at::Tensor h = at::gelu(at::matmul(a, b));
        at::Tensor s = at::softmax(at::layer_norm(h, {96}), -1);
        at::Tensor loss = (s * at::randn({64, 96})).sum();
        loss.backward();
        QVERIFY(a.grad().defined());
        QVERIFY(allocator.currentBytes() > before);
    }
    QCOMPARE(allocator.currentBytes(), before); // every byte counted in was counted out
    QVERIFY(allocator.peakBytes() - before >= int64_t(64 * 96 * 4));
}

void tst_CountingAllocator::peakAfterFirstOptimizerStepCoversModelState()
{
    auto &allocator = CountingAllocator::instance();
    ModelConfig config;
    config.contextLength = 16;
    config.width = 32;
    config.layers = 2;
    config.heads = 2;
    allocator.resetPeak();
    const int64_t before = allocator.currentBytes();
    GPT model(GPTOptions::from(config));
    torch::optim::AdamW optimizer(model->parameters(), torch::optim::AdamWOptions(1e-3));
    at::Tensor tokens = at::randint(0, 256, {2, 16}, at::kLong);
    model->loss(tokens, tokens).backward();
    optimizer.step();
    const int64_t parameterBytes = model->parameterCount() * 4;
    // weights + gradients + Adam's two moments, all float32
    QVERIFY2(allocator.peakBytes() - before >= 4 * parameterBytes,
             qPrintable(QString("%1 < %2").arg(allocator.peakBytes() - before).arg(4 * parameterBytes)));
}

void tst_CountingAllocator::uncountedScopeLeavesNoTrace()
{
    CountingAllocator &allocator = CountingAllocator::instance();
    allocator.resetPeak();
    const int64_t before = allocator.currentBytes();
    const int64_t peak = allocator.peakBytes();
    at::Tensor kept;
    {
        const CountingAllocator::Uncounted uncounted;
        allocator.setBudget(before + 1);         // would refuse any counted allocation
        kept = at::empty({1 << 20}, at::kFloat); // 4 MiB, outlives the scope
        allocator.setBudget(0);
    }
    QCOMPARE(allocator.currentBytes(), before);
    QCOMPARE(allocator.peakBytes(), peak);
    kept = at::Tensor(); // its free must not be subtracted either
    QCOMPARE(allocator.currentBytes(), before);
    const at::Tensor counted = at::empty({256}, at::kFloat); // and counting resumes
    QCOMPARE(allocator.currentBytes(), before + 1024);
}

// The trainer's memory meter on the counting allocator: warm-up is not measured, the first measured
// step resets the peak, and only its first forward counts as the saved activations.
void tst_CountingAllocator::meterMeasuresTheFirstForwardAfterWarmup()
{
    auto &allocator = CountingAllocator::instance();
    MemoryMeter meter(c10::Device(c10::DeviceType::CPU), 1);
    std::vector<at::Tensor> saved;
    const auto forward = [&](int64_t bytes) {
        meter.forwardBegins();
        saved.push_back(at::empty({bytes}, at::kByte)); // what a forward keeps for backward
        at::empty({4 * bytes}, at::kByte);              // and a temporary it frees
        meter.forwardEnds();
    };
    meter.stepBegins(0);
    forward(1000);
    QVERIFY(!meter.savedActivationBytes()); // warm-up
    saved.clear();
    meter.stepBegins(1);
    QCOMPARE(meter.peakBytes(), allocator.currentBytes()); // a new high-water mark
    forward(3000);
    forward(5000); // a second microbatch of the same step
    QCOMPARE(meter.savedActivationBytes(), std::optional<int64_t>(3000));
    QVERIFY(meter.peakBytes() >= allocator.currentBytes() + 4 * 5000); // the temporary, with both saved
    meter.stepBegins(2);
    forward(7000);
    QCOMPARE(meter.savedActivationBytes(), std::optional<int64_t>(3000)); // measured once
}

QTEST_APPLESS_MAIN(tst_CountingAllocator)
#include "tst_countingallocator.moc"
