// SPDX-License-Identifier: MIT
// The runtime-tuning cache: per machine and precision family, and nothing from a damaged file.
#include "core/config/tuning.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace optlog;

class tst_Tuning : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void familiesShareKernels_data()
    {
        QTest::addColumn<QString>("mode");
        QTest::addColumn<QString>("family");
        QTest::newRow("fp32") << "fp32"
                              << "fp32";
        QTest::newRow("autocast-bf16") << "autocast-bf16"
                                       << "bf16";
        QTest::newRow("master-bf16") << "master-bf16"
                                     << "bf16";
        QTest::newRow("pure-bf16") << "pure-bf16"
                                   << "bf16";
        QTest::newRow("autocast-fp16") << "autocast-fp16"
                                       << "fp16";
        QTest::newRow("master-fp16") << "master-fp16"
                                     << "fp16";
    }
    void familiesShareKernels()
    {
        QFETCH(QString, mode);
        QFETCH(QString, family);
        QCOMPARE(QString::fromStdString(precisionFamily(mode.toStdString())), family);
    }

    void roundTripPerMachineAndFamily()
    {
        QTemporaryDir dir;
        const std::string file = dir.filePath("optlog/tuning.json").toStdString(); // folder made on write
        QVERIFY(!readTuning(file, "machine A", "fp32"));
        TunedSettings fp32{2, "PASSIVE", "", 5400, 2100};
        TunedSettings bf16{2, "ACTIVE", "SkylakeX", 10000, 9000};
        writeTuning(file, "machine A", "fp32", fp32);
        writeTuning(file, "machine A", "bf16", bf16);
        const auto readBack = readTuning(file, "machine A", "bf16");
        QVERIFY(readBack);
        QCOMPARE(readBack->threads, 2);
        QCOMPARE(readBack->waitPolicy, std::string("ACTIVE"));
        QCOMPARE(readBack->coreType, std::string("SkylakeX"));
        QCOMPARE(readBack->untunedTokensPerSecond, 9000.0);
        QCOMPARE(readTuning(file, "machine A", "fp32")->waitPolicy, std::string("PASSIVE"));
        QVERIFY(!readTuning(file, "machine B", "fp32")); // another machine is untuned
        QVERIFY(!readTuning(file, "machine A", "fp16"));
    }

    void damagedOrInvalidEntriesAreIgnored()
    {
        QTemporaryDir dir;
        const QString file = dir.filePath("tuning.json");
        QFile out(file);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(
            R"({"m": {"fp32": {"threads": 0, "wait_policy": "PASSIVE"}, "bf16": {"threads": 2, "wait_policy": "SOMETIMES"}}})");
        out.close();
        QVERIFY(!readTuning(file.toStdString(), "m", "fp32"));
        QVERIFY(!readTuning(file.toStdString(), "m", "bf16"));
        QVERIFY(out.open(QIODevice::WriteOnly | QIODevice::Truncate));
        out.write("{ damaged");
        out.close();
        QVERIFY(!readTuning(file.toStdString(), "m", "fp32"));
        writeTuning(file.toStdString(), "m", "fp32", {1, "ACTIVE", "", 1, 1}); // rewrites the damaged file
        QVERIFY(readTuning(file.toStdString(), "m", "fp32"));
    }

    void candidatesCoverThreadsWaitPoliciesAndCoreTypes()
    {
        const std::vector<TuneCandidate> two = tuneCandidates(2, {"", "Haswell"});
        QCOMPARE(two.size(), size_t(2 * 2 * 2));
        QCOMPARE(int(std::count_if(two.begin(), two.end(),
                                   [](const TuneCandidate &c) { return c.isUntunedDefault(2); })),
                 1);
        QCOMPARE(tuneCandidates(1, {""}).size(), size_t(2)); // one core: one thread count
        QCOMPARE(QString::fromStdString(two.back().label()), QStringLiteral("1 thread, ACTIVE, Haswell"));
    }

    void theFastestMedianWinsBesideTheUntunedDefault()
    {
        std::vector<TuneCandidate> candidates = tuneCandidates(2, {""});
        // 2 PASSIVE (the default), 2 ACTIVE, 1 PASSIVE, 1 ACTIVE; one slow outlier does not decide.
        candidates[0].tokensPerSecond = {5000, 5200, 5100};
        candidates[1].tokensPerSecond = {1000, 6000, 5900};
        candidates[2].tokensPerSecond = {3600, 3700};
        candidates[3].tokensPerSecond = {3650, 3600};
        QCOMPARE(candidates[1].median(), 5900.0);
        QCOMPARE(candidates[2].median(), 3650.0);
        const TunedSettings best = bestSettings(candidates, 2);
        QCOMPARE(best.threads, 2);
        QCOMPARE(QString::fromStdString(best.waitPolicy), QStringLiteral("ACTIVE"));
        QCOMPARE(best.tokensPerSecond, 5900.0);
        QCOMPARE(best.untunedTokensPerSecond, 5100.0);
    }

    void aBetterCoreTypeOnlyForGenericKernels_data()
    {
        QTest::addColumn<QString>("chosen");
        QTest::addColumn<QString>("flags");
        QTest::addColumn<QString>("better");
        QTest::newRow("generic on AVX-512") << "Prescott"
                                            << "sse4_2 avx avx2 avx512f avx512bw"
                                            << "SkylakeX";
        QTest::newRow("generic on AVX2") << "Core2"
                                         << "sse4_2 avx avx2 fma"
                                         << "Haswell";
        QTest::newRow("generic, old CPU") << "Katmai"
                                          << "sse4_2"
                                          << "";
        QTest::newRow("already specific") << "Haswell"
                                          << "avx2 avx512f avx512bw"
                                          << "";
        QTest::newRow("not OpenBLAS") << ""
                                      << "avx2"
                                      << "";
    }
    void aBetterCoreTypeOnlyForGenericKernels()
    {
        QFETCH(QString, chosen);
        QFETCH(QString, flags);
        QFETCH(QString, better);
        QCOMPARE(QString::fromStdString(betterCoreType(chosen.toStdString(), flags.toStdString())), better);
    }
};

QTEST_APPLESS_MAIN(tst_Tuning)
#include "tst_tuning.moc"
