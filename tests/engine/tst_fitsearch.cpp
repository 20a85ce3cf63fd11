// SPDX-License-Identifier: MIT
// `optlog fit`'s search: the largest microbatch that really fits a budget, then the levers.
#include "core/config/config.h"
#include "core/engine/run/fitsearch.h"
#include "core/memorymodel/memorymodel.h"

#include <ATen/Parallel.h>

#include <QtTest>

using namespace optlog;

namespace {

RunConfig smoke(const std::vector<std::string> &overrides = {})
{
    std::vector<std::string> all = {"data.corpus=generated", "train.microbatch=16", "runtime.threads=1"};
    all.insert(all.end(), overrides.begin(), overrides.end());
    return loadRunConfig("smoke", "", all);
}

} // namespace

class tst_FitSearch : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void findsTheLargestMicrobatchThatReallyFits()
    {
        const RunConfig config = smoke();
        const int64_t budget = 2 << 20;
        QString printed;
        const FitResult result = FitSearch(config, budget).run([&](const std::string &l) {
            printed += QString::fromStdString(l);
        });
        QCOMPARE(result.effectiveBatch, int64_t(16));
        QCOMPARE(result.limitBytes, int64_t(double(budget) * 0.9));
        QVERIFY(result.chosenMicrobatch > 0);
        QVERIFY2(result.chosenMicrobatch < 16, "the whole batch does not fit 2 MiB");
        QCOMPARE(16 % result.chosenMicrobatch, int64_t(0));
        QCOMPARE(result.fitted.train.microbatch * result.fitted.train.accumulation, int64_t(16));
        // The chosen one was verified with real steps, under the limit; every trial before it did not fit.
        QVERIFY(!result.trials.empty());
        const MicrobatchTrial &chosen = result.trials.back();
        QCOMPARE(chosen.microbatch, result.chosenMicrobatch);
        QVERIFY(chosen.fits && chosen.measuredPeakBytes > 0 && chosen.measuredPeakBytes <= result.limitBytes);
        for (size_t i = 0; i + 1 < result.trials.size(); ++i)
            QVERIFY(!result.trials[i].fits && !result.trials[i].message.empty());
        // Any larger microbatch is predicted over the limit or was refused by the steps.
        for (int64_t b = result.chosenMicrobatch + 1; b <= 16; ++b) {
            if (16 % b != 0)
                continue;
            RunConfig larger = config;
            larger.train.microbatch = b;
            larger.train.accumulation = 16 / b;
            const bool tried = std::any_of(result.trials.begin(), result.trials.end(),
                                           [b](const MicrobatchTrial &t) { return t.microbatch == b; });
            QVERIFY(tried || estimateMemory(larger).peakBytes > result.limitBytes);
        }
        QCOMPARE(result.levers.size(), size_t(4));
        for (const auto &lever : result.levers)
            QVERIFY2(lever.notApplicable.empty() && lever.predictedPeakBytes > 0 && lever.tokensPerSecond > 0,
                     lever.lever.c_str());
        QVERIFY2(printed.contains(QStringLiteral("proposal: --set train.microbatch=%1").arg(result.chosenMicrobatch)),
                 qPrintable(printed));
    }

    void noMicrobatchFitsATinyBudget()
    {
        const FitResult result = FitSearch(smoke(), 64 << 10).run([](const std::string &) {});
        QCOMPARE(result.chosenMicrobatch, int64_t(0));
        QCOMPARE(result.fitted.train.microbatch, int64_t(1));
        QCOMPARE(result.fitted.train.accumulation, int64_t(16));
    }

    void rehearsesOnTheCpuOnly()
    {
        try {
            FitSearch(smoke({"runtime.device=cuda"}), 1 << 30);
            QFAIL("a CUDA config was rehearsed on the CPU");
        } catch (const ConfigError &e) {
            QCOMPARE(e.field(), std::string("runtime.device"));
        }
    }
};

QTEST_APPLESS_MAIN(tst_FitSearch)
#include "tst_fitsearch.moc"
