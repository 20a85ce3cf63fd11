// SPDX-License-Identifier: MIT
// The memory model against the real trainer on the counting allocator, on small configs drawn from
// a seed no term of the model was derived from (docs/memory-model.md lists the seeds that were):
// the predicted peak, saved activations and temporaries each within 10% of the measured. Bytes
// are deterministic on a given CPU, so a miss is the model's, not noise; which kernels LibTorch
// picks depends on the CPU (below).
#include "core/engine/kernels/gemm.h"
#include "core/engine/machine/device.h"
#include "core/engine/memory/countingallocator.h"
#include "core/memorymodel/memorymodel.h"
#include "tests/common/memorysample.h"

#include <QtTest>

using namespace optlog;
using optlog::testing::MemoryCase;

Q_DECLARE_METATYPE(MemoryCase)

class tst_MemoryAccuracy : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { CountingAllocator::install(); }
    void predictionIsWithinTenPercent_data();
    void predictionIsWithinTenPercent();
};

void tst_MemoryAccuracy::predictionIsWithinTenPercent_data()
{
    QTest::addColumn<MemoryCase>("config");
    for (const MemoryCase &c : optlog::testing::sampleMemoryCases(13, 12, optlog::testing::testBounds()))
        QTest::newRow(c.label().c_str()) << c;
}

namespace {

// The model's 16-bit terms were fitted to LibTorch's own BF16 products on a CPU with AVX-512 (BW,
// VL, DQ), which copy attention's strided operands. optlog's own BF16 products (oneDNN's matmul
// primitive there, widened to FP32 without AVX-512: gemm.h) read them in place and make fewer
// transients in some configs (docs/memory-model.md, "The machine"): how far over a prediction of
// 16-bit temporaries may be. Under-prediction, what a budget cannot afford, is held to 10%
// everywhere.
double temporariesOverAllowed(const MemoryCase &config)
{
    if (config.mode == "fp32")
        return 0.10;
    // 20.5% over at most with the matmul primitive, 20.8% widened (B5 T256 C128 L3 H8
    // autocast-bf16 with checkpointing and chunked attention).
    if (oneDnnGemmBuilt())
        return 0.25;
    // LibTorch's own kernels: as fitted with AVX-512; its scalar ones without (10.3% at most,
    // with checkpointing, on an AVX2 EPYC).
    const bool bf16KernelsAsFitted = __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl")
                                     && __builtin_cpu_supports("avx512dq");
    return bf16KernelsAsFitted || config.checkpointEvery == 0 ? 0.10 : 0.15;
}

} // namespace

void tst_MemoryAccuracy::predictionIsWithinTenPercent()
{
    QFETCH(MemoryCase, config);
    const MemoryEstimate predicted = estimateMemory(config.config(), deviceTermsOf(config.config()));
    std::map<std::string, int64_t> measured = optlog::testing::measureMemoryRoles(config);
    const auto check = [&](MemoryRole role, int64_t predictedBytes, double over) {
        const int64_t bytes = measured[memoryRoleName(role)];
        QVERIFY2(bytes > 0, memoryRoleName(role));
        const double error = double(predictedBytes - bytes) / double(bytes);
        QVERIFY2(error >= -0.10 && error <= over, qPrintable(QString("%1: predicted %2 bytes, measured %3 (%4%)")
                                                                 .arg(memoryRoleName(role))
                                                                 .arg(predictedBytes)
                                                                 .arg(bytes)
                                                                 .arg(100 * error, 0, 'f', 1)));
    };
    check(MemoryRole::Peak, predicted.peakBytes, 0.10);
    check(MemoryRole::SavedActivations, predicted.find(MemoryRole::SavedActivations)->bytes, 0.10);
    check(MemoryRole::Temporaries, predicted.find(MemoryRole::Temporaries)->bytes, temporariesOverAllowed(config));
}

QTEST_APPLESS_MAIN(tst_MemoryAccuracy)
#include "tst_memoryaccuracy.moc"
