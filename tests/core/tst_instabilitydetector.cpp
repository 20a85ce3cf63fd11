// SPDX-License-Identifier: MIT
#include "core/recording/instabilitydetector.h"

#include <QtTest>
#include <cmath>

using namespace optlog;

namespace {

DiagnosticsConfig diagnostics(double lossFactor = 3, double gradFactor = 5, int64_t window = 10)
{
    DiagnosticsConfig config;
    config.lossSpikeFactor = lossFactor;
    config.gradNormSpikeFactor = gradFactor;
    config.spikeWindow = window;
    return config;
}

StepMetrics metrics(int64_t step, double loss, double gradNorm = 1.0, bool skipped = false)
{
    StepMetrics m;
    m.step = step;
    m.trainLoss = loss;
    m.gradNorm = gradNorm;
    m.skipped = skipped;
    return m;
}

// The kinds and steps the detector finds over a series of (loss, gradient norm) pairs.
std::vector<std::pair<EventKind, int64_t>> detected(InstabilityDetector &detector,
                                                    const std::vector<StepMetrics> &series)
{
    std::vector<std::pair<EventKind, int64_t>> found;
    for (const auto &m : series)
        for (const auto &instability : detector.observe(m))
            found.emplace_back(instability.kind, instability.step);
    return found;
}

using Found = std::vector<std::pair<EventKind, int64_t>>;

} // namespace

class tst_InstabilityDetector : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void aLossSpikeIsJudgedAgainstTheRunningMedian();
    void noSpikeBeforeTheWindowIsFull();
    void consecutiveSpikesAreEachFound();
    void aGradientNormSpike();
    void skippedStepsAndNonFiniteValues();
    void eachFindingSaysWhatAndWhere();
};

void tst_InstabilityDetector::aLossSpikeIsJudgedAgainstTheRunningMedian()
{
    InstabilityDetector detector(diagnostics(3));
    std::vector<StepMetrics> series;
    for (int64_t s = 0; s < 20; ++s) // a noisy plateau: 1.9, 2.1, 1.9, ... with a median of 2
        series.push_back(metrics(s, s % 2 ? 2.1 : 1.9));
    series.push_back(metrics(20, 5.9)); // 2.95x: not a spike at k = 3
    series.push_back(metrics(21, 6.5)); // 3.1x the median of 2.1 that 5.9 moved it to: a spike
    series.push_back(metrics(22, 2.0));
    QCOMPARE(detected(detector, series), (Found{{EventKind::LossSpike, 21}}));
}

void tst_InstabilityDetector::noSpikeBeforeTheWindowIsFull()
{
    InstabilityDetector detector(diagnostics(3, 5, 10));
    std::vector<StepMetrics> series;
    for (int64_t s = 0; s < 9; ++s)
        series.push_back(metrics(s, 1.0));
    series.push_back(metrics(9, 100.0));  // nine values behind it: the window of ten is not full
    series.push_back(metrics(10, 100.0)); // now it is, but its median is still 1
    QCOMPARE(detected(detector, series), (Found{{EventKind::LossSpike, 10}}));
}

void tst_InstabilityDetector::consecutiveSpikesAreEachFound()
{
    // A mean would be pulled up by the first spike and miss the second; the median is not.
    InstabilityDetector detector(diagnostics(2, 5, 5));
    std::vector<StepMetrics> series;
    for (int64_t s = 0; s < 5; ++s)
        series.push_back(metrics(s, 1.0));
    series.push_back(metrics(5, 4.0));
    series.push_back(metrics(6, 4.0));
    QCOMPARE(detected(detector, series), (Found{{EventKind::LossSpike, 5}, {EventKind::LossSpike, 6}}));
}

void tst_InstabilityDetector::aGradientNormSpike()
{
    InstabilityDetector detector(diagnostics(3, 5, 10));
    std::vector<StepMetrics> series;
    for (int64_t s = 0; s < 10; ++s)
        series.push_back(metrics(s, 2.0, 0.5));
    series.push_back(metrics(10, 2.0, 2.4)); // 4.8x
    series.push_back(metrics(11, 2.0, 2.6)); // 5.2x
    QCOMPARE(detected(detector, series), (Found{{EventKind::GradNormSpike, 11}}));
}

void tst_InstabilityDetector::skippedStepsAndNonFiniteValues()
{
    InstabilityDetector detector(diagnostics(3, 5, 3));
    const double nan = std::nan(""), inf = INFINITY;
    const std::vector<StepMetrics> series = {
        metrics(0, 2.0),
        metrics(1, 2.0),
        metrics(2, 2.0),
        metrics(3, 2.0, nan, true), // the scaler skipped it: one skipped step, not a non-finite value
        metrics(4, 2.0, inf),       // no scaler: the optimizer skipped a non-finite gradient
        metrics(5, nan, -inf),      // a non-finite loss and gradient
        metrics(6, 2.0, nan),       // a norm a recorded trainer did not report: not a finding
        metrics(7, 2.0, 1.0),       // the non-finite values never entered the medians
    };
    QCOMPARE(detected(detector, series), (Found{{EventKind::SkippedStep, 3},
                                                {EventKind::NonFinite, 4},
                                                {EventKind::NonFinite, 5},
                                                {EventKind::NonFinite, 5}}));
}

void tst_InstabilityDetector::eachFindingSaysWhatAndWhere()
{
    InstabilityDetector detector(diagnostics(3, 5, 3));
    for (int64_t s = 0; s < 3; ++s)
        detector.observe(metrics(s, 2.0));
    const auto found = detector.observe(metrics(3, 8.0));
    QCOMPARE(found.size(), size_t(1));
    QCOMPARE(QString::fromStdString(found.front().message),
             QString("train loss 8 at step 3 is 4.00x its running median 2 over 3 steps"));
}

QTEST_APPLESS_MAIN(tst_InstabilityDetector)
#include "tst_instabilitydetector.moc"
