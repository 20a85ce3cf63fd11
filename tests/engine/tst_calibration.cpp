// SPDX-License-Identifier: MIT
// The machine's matmul peak (cached), the machine-speed index (invisible to a run's memory), and
// the check that the BLAS computes right.
#include "core/config/config.h"
#include "core/engine/machine/calibration.h"
#include "core/engine/machine/environment.h"
#include "core/engine/memory/countingallocator.h"
#include "tests/common/files.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace optlog;

class tst_Calibration : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void peakIsMeasuredOnceThenCached()
    {
        QTemporaryDir dir;
        const std::string cache = dir.filePath("peak.json").toStdString();
        RunConfig config = loadRunConfig("smoke", "", {});
        const MatmulPeak first = matmulPeak(config, 1, cache, 0.02);
        QVERIFY(!first.fromCache);
        QVERIFY(first.float32Gflops > 0.1); // a real measurement, not a placeholder
        QVERIFY(first.bfloat16Gflops > 0.1);
        QCOMPARE(first.shapes, std::string("square 1024, 2048"));
        const MatmulPeak second = matmulPeak(config, 1, cache, 0.02);
        QVERIFY(second.fromCache);
        QCOMPARE(second.float32Gflops, first.float32Gflops);
        QCOMPARE(second.bfloat16Gflops, first.bfloat16Gflops);
        // The machine's peak, not the model's: another model, microbatch or budget reads the same
        // entry, so every run of a dtype here has the same denominator.
        config.model.width = 64;
        config.train.microbatch = 1;
        config.memory.budget = "64MiB";
        const MatmulPeak otherModel = matmulPeak(config, 1, cache, 0.02);
        QVERIFY(otherModel.fromCache);
        QCOMPARE(otherModel.float32Gflops, first.float32Gflops);
        // Other threads, or another OpenMP wait policy (optlog tune's choice per precision), are
        // another entry.
        QVERIFY(!matmulPeak(config, 2, cache, 0.02).fromCache);
        const QByteArray policy = qgetenv("OMP_WAIT_POLICY");
        qputenv("OMP_WAIT_POLICY", policy == "ACTIVE" ? "PASSIVE" : "ACTIVE");
        const MatmulPeak otherPolicy = matmulPeak(config, 1, cache, 0.02);
        if (policy.isNull())
            qunsetenv("OMP_WAIT_POLICY");
        else
            qputenv("OMP_WAIT_POLICY", policy);
        QVERIFY(!otherPolicy.fromCache);
    }

    void peakLeavesTheAllocatorAlone()
    {
        QTemporaryDir dir;
        CountingAllocator::install();
        CountingAllocator &allocator = CountingAllocator::instance();
        allocator.resetPeak();
        const int64_t peak = allocator.peakBytes();
        allocator.setBudget(allocator.currentBytes() + 1024); // its 48 MiB of matrices would break it
        const MatmulPeak measured = matmulPeak(loadRunConfig("smoke", "", {}), 1, dir.filePath("p.json").toStdString(),
                                               0.02);
        allocator.setBudget(0);
        QVERIFY(measured.float32Gflops > 0.1);
        QVERIFY(!allocator.refusal());
        QCOMPARE(allocator.peakBytes(), peak);
    }

    void peakTheRunsKernelsBeatIsMeasuredAgain()
    {
        QTemporaryDir dir;
        const std::string cache = dir.filePath("peak.json").toStdString();
        const RunConfig config = loadRunConfig("smoke", "", {});
        const MatmulPeak measured = matmulPeak(config, 1, cache, 0.02);
        // As if measured while the machine was busy: FP32 at 1 GFLOP/s. BF16 as if measured at an
        // hour better than any since.
        QFile file(QString::fromStdString(cache));
        QVERIFY(file.open(QIODevice::ReadOnly));
        nlohmann::json entries = nlohmann::json::parse(file.readAll().toStdString());
        file.close();
        entries[measured.key]["float32_gflops"] = 1.0;
        entries[measured.key]["bfloat16_gflops"] = 1e9;
        for (auto &&rate : entries[measured.key]["path_gflops"]["float32"].items())
            rate.value() = 1.0;
        for (auto &&rate : entries[measured.key]["path_gflops"]["bfloat16"].items())
            rate.value() = 1e9;
        testing::writtenFile(dir, "peak.json", QByteArray::fromStdString(entries.dump()));
        // A run's kernels within the margin leave it be.
        const MatmulPeak within = matmulPeak(config, 1, cache, 0.02, {at::kFloat, 1.05});
        QVERIFY(within.fromCache && !within.remeasured);
        QCOMPARE(within.float32Gflops, 1.0);
        // Beyond it, the peak is measured again; each dtype keeps its best measurement.
        const MatmulPeak again = matmulPeak(config, 1, cache, 0.02, {at::kFloat, 2.0});
        QVERIFY(!again.fromCache && again.remeasured);
        QVERIFY(again.float32Gflops > 2.0);
        QCOMPARE(again.bfloat16Gflops, 1e9);
        QVERIFY(again.toJson().value("remeasured", false));
        const MatmulPeak after = matmulPeak(config, 1, cache, 0.02, {at::kFloat, 2.0});
        QVERIFY(after.fromCache);
        QCOMPARE(after.float32Gflops, again.float32Gflops);
        // The observed dtype's own peak is the one compared: BF16's is not beaten here.
        QVERIFY(matmulPeak(config, 1, cache, 0.02, {at::kBFloat16, 1e6}).fromCache);
    }

    // On a CPU each dtype is timed on every path the build has, the dtype's peak the best of them;
    // a run's kernels are compared with its own path's peak.
    void peakIsMeasuredPerProductPath()
    {
        QTemporaryDir dir;
        const std::string cache = dir.filePath("peak.json").toStdString();
        const RunConfig config = loadRunConfig("smoke", "", {});
        const MatmulPeak measured = matmulPeak(config, 1, cache, 0.02);
        for (const auto &[dtype, name] : {std::pair{at::kFloat, "float32"}, std::pair{at::kBFloat16, "bfloat16"}}) {
            double best = 0;
            for (const ProductPath path : productPathCandidates(dtype)) {
                const double rate = measured.pathGflops.at(name).at(pathName(path));
                QVERIFY2(rate > 0.1, name);
                QCOMPARE(measured.gflops(dtype, false, path), rate);
                best = std::max(best, rate);
            }
            QCOMPARE(measured.gflops(dtype), best);
        }
        QVERIFY(measured.toJson().contains("path_gflops"));
        if (productPathCandidates(at::kFloat).size() < 2)
            return; // one path: nothing to tell apart
        // One path measured at a busy hour: a run on it beats it and measures again; a run on
        // another path, whose peak stands, does not.
        QFile file(QString::fromStdString(cache));
        QVERIFY(file.open(QIODevice::ReadOnly));
        nlohmann::json entries = nlohmann::json::parse(file.readAll().toStdString());
        file.close();
        const ProductPath slow = productPathCandidates(at::kFloat)[0], other = productPathCandidates(at::kFloat)[1];
        entries[measured.key]["path_gflops"]["float32"][pathName(slow)] = 1.0;
        testing::writtenFile(dir, "peak.json", QByteArray::fromStdString(entries.dump()));
        QVERIFY(matmulPeak(config, 1, cache, 0.02, {at::kFloat, 2.0, false, other}).fromCache);
        const MatmulPeak again = matmulPeak(config, 1, cache, 0.02, {at::kFloat, 2.0, false, slow});
        QVERIFY(again.remeasured);
        QVERIFY(again.gflops(at::kFloat, false, slow) > 2.0);
    }

    void damagedCacheIsMeasuredAgain()
    {
        QTemporaryDir dir;
        const QString cache = testing::writtenFile(dir, "peak.json", "{ not json");
        const MatmulPeak peak = matmulPeak(loadRunConfig("smoke", "", {}), 1, cache.toStdString(), 0.02);
        QVERIFY(!peak.fromCache && peak.float32Gflops > 0);
        QVERIFY(matmulPeak(loadRunConfig("smoke", "", {}), 1, cache.toStdString(), 0.02).fromCache);
    }

    void speedIndexLeavesTheAllocatorAlone()
    {
        CountingAllocator::install();
        CountingAllocator &allocator = CountingAllocator::instance();
        allocator.resetPeak();
        const int64_t inUse = allocator.currentBytes();
        const int64_t peak = allocator.peakBytes();
        allocator.setBudget(inUse + 1024); // a budget the probe's 3 MiB of matrices would break
        const double gflops = referenceKernelGflops();
        const double bf16 = referenceKernelGflops(at::kBFloat16);
        allocator.setBudget(0);
        QVERIFY(gflops > 0.1);
        QVERIFY(bf16 > 0.1);
        QVERIFY(!allocator.refusal());
        QCOMPARE(allocator.peakBytes(), peak);
        QCOMPARE(allocator.currentBytes(), inUse);
    }

    // The BLAS this process loaded multiplies right (the check `optlog tune` makes of a core
    // type), and so do oneDNN's sgemm and matmul primitive where the build has them.
    void gemmMatchesTheDoublePrecisionReference()
    {
        for (const ProductPath path : productPathCandidates(at::kFloat)) {
            const GemmCheck check = checkGemm({path, path});
            QVERIFY2(check.correct, qPrintable(QString::number(check.largestError)));
            QVERIFY(check.largestError > 0); // FP32 rounds: an error of exactly 0 would mean no real product
            QVERIFY(check.largestError < 1e-4);
        }
    }
};

QTEST_APPLESS_MAIN(tst_Calibration)
#include "tst_calibration.moc"
