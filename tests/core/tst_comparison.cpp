// SPDX-License-Identifier: MIT
// Replicates over seeds: the interval, the verdicts in every class, groups, instability and numerics texts.
#include "core/analysis/comparison.h"
#include "core/analysis/decisions.h"
#include "core/analysis/decisionwords.h"
#include "core/analysis/statistics.h"
#include "core/contract/format.h"

#include <QtTest>
#include <cmath>
#include <random>

using namespace optlog;

namespace {

// A completed run of `group` with one validation point at 1000 tokens.
RunSummary replicate(const std::string &group, const std::string &name, double loss, double tokensPerSecond = 1000,
                     int64_t peak = 1000)
{
    RunSummary s;
    s.run.name = name;
    s.run.group = group;
    s.run.outcome = Outcome::Completed;
    s.throughput.median = tokensPerSecond;
    s.throughput.p10 = tokensPerSecond * 0.99;
    s.throughput.p90 = tokensPerSecond * 1.01;
    s.throughput.steps = 10;
    s.throughput.blocks = {tokensPerSecond * 0.99, tokensPerSecond * 1.01, tokensPerSecond, tokensPerSecond * 0.995,
                           tokensPerSecond * 1.005};
    s.peakBytes = peak;
    s.validation = {{9, 1000, loss, 32, 0.2}};
    return s;
}

GroupSummary group(const std::string &name, const std::vector<double> &losses)
{
    GroupSummary g{name, {}};
    for (size_t i = 0; i < losses.size(); ++i)
        g.replicates.push_back(replicate(name, name + " seed " + std::to_string(i + 1), losses[i]));
    return g;
}

QString verdictOf(const std::vector<double> &run, const std::vector<double> &baseline, double tolerance = 0.02)
{
    return QString::fromStdString(judgeQuality(run, baseline, tolerance).text());
}

} // namespace

class tst_Comparison : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void studentQuantilesMatchTheTables();
    void welchIntervalOfEqualGroups();
    void welchIntervalCoversTheTrueDifference();
    void verdictClasses_data();
    void verdictClasses();
    void cantTellSaysHowManySeedsWouldDecide();
    void oneSeedASideFallsBackToTheTolerance();
    void groupsCompareTheirMeansAndMedians();
    void runsGroupInOrderWithRerunsReplaced();
    void speedCallsFollowTheInterval_data();
    void speedCallsFollowTheInterval();
    void twoSeedsResolveAtLeastWhatOneSeedsBlocksDo();
    void theBaselineRowIsNotJudged();
    void instabilitiesAreCountedInWords();
    void aTf32RunsSpeedSaysTf32();
    void speedsOnDifferentMachinesCompareThroughTheIndexOrNotAtAll();
    void numericsSayWhatFp16AndBf16WouldDo();
};

void tst_Comparison::studentQuantilesMatchTheTables()
{
    // Printed tables; dof 1 is Cauchy, tan(0.475 pi); dof 2 has the closed form (2p-1)/sqrt(2p(1-p)).
    QVERIFY(std::fabs(studentTQuantile(0.975, 1) - 12.706205) < 1e-5);
    QVERIFY(std::fabs(studentTQuantile(0.975, 2) - 4.302653) < 1e-5);
    QVERIFY(std::fabs(studentTQuantile(0.975, 4) - 2.776445) < 1e-5);
    QVERIFY(std::fabs(studentTQuantile(0.975, 10) - 2.228139) < 1e-5);
    QVERIFY(std::fabs(studentTQuantile(0.995, 3) - 5.840909) < 1e-5);
    QVERIFY(std::fabs(studentTQuantile(0.975, 1e7) - 1.959964) < 1e-5); // the normal's
    QVERIFY(std::fabs(studentTQuantile(0.025, 4) + 2.776445) < 1e-5);   // symmetric
    const double between = studentTQuantile(0.975, 2.5);                // Welch's dof are not integers
    QVERIFY(between < 4.302653 && between > 3.182446);
    QVERIFY(std::isnan(studentTQuantile(1.0, 4)));
    QVERIFY(std::isnan(studentTQuantile(0.5, 0)));
}

void tst_Comparison::welchIntervalOfEqualGroups()
{
    // Equal sizes and spreads: Welch's dof is 2n - 2 = 4, the standard error sqrt(2/3).
    const MeanDifference d = welchInterval(sampleStats({3, 4, 5}), sampleStats({1, 2, 3}));
    QCOMPARE(d.difference, 2.0);
    QVERIFY(std::fabs(d.dof - 4) < 1e-12);
    QVERIFY(std::fabs(d.halfWidth - 2.776445 * std::sqrt(2.0 / 3)) < 1e-5);
    // Unequal spreads: fewer degrees of freedom than 2n - 2.
    QVERIFY(welchInterval(sampleStats({1, 2, 3}), sampleStats({2, 4, 6})).dof < 4);
    QVERIFY(std::isnan(welchInterval(sampleStats({1}), sampleStats({1, 2})).halfWidth));
    QCOMPARE(welchInterval(sampleStats({2, 2}), sampleStats({1, 1})).halfWidth, 0.0);
}

void tst_Comparison::welchIntervalCoversTheTrueDifference()
{
    // Groups drawn with a known difference (0.01) and known seed noise (sd 0.02 and 0.01): the
    // 95% interval must cover the truth about 95% of the time.
    std::mt19937_64 random(42);
    std::normal_distribution<double> noise(0, 1);
    int covered = 0;
    constexpr int trials = 4000;
    for (int trial = 0; trial < trials; ++trial) {
        std::vector<double> a, b;
        for (int i = 0; i < 3; ++i)
            a.push_back(2.51 + 0.02 * noise(random));
        for (int i = 0; i < 4; ++i)
            b.push_back(2.50 + 0.01 * noise(random));
        const MeanDifference d = welchInterval(sampleStats(a), sampleStats(b));
        covered += std::fabs(d.difference - 0.01) <= d.halfWidth;
    }
    const double coverage = double(covered) / trials;
    QVERIFY2(coverage > 0.93 && coverage < 0.975, qPrintable(QString::number(coverage)));
}

void tst_Comparison::verdictClasses_data()
{
    QTest::addColumn<std::vector<double>>("run");
    QTest::addColumn<std::vector<double>>("baseline");
    QTest::addColumn<QString>("verdict");
    // Seed noise sd 0.004 on both sides, 3 vs 3: half-width 2.776 * 0.004 * sqrt(2/3) = 0.009.
    const std::vector<double> base = {2.500, 2.504, 2.496};
    QTest::newRow("same") << std::vector<double>{2.503, 2.507, 2.499} << base
                          << "same quality (Δ +0.003 ± 0.009 nats, 3 vs 3 seeds)";
    QTest::newRow("worse") << std::vector<double>{2.541, 2.545, 2.537} << base
                           << "worse quality (Δ +0.041 ± 0.009 nats, 3 vs 3 seeds)";
    QTest::newRow("better") << std::vector<double>{2.459, 2.463, 2.455} << base
                            << "better quality (Δ -0.041 ± 0.009 nats, 3 vs 3 seeds)";
    // Significantly worse, but by less than the tolerance: still the same quality.
    QTest::newRow("worse within tolerance")
        << std::vector<double>{2.5100, 2.5101, 2.5099} << std::vector<double>{2.5000, 2.5001, 2.4999}
        << "same quality (Δ +0.010 ± 0.000 nats, 3 vs 3 seeds)";
}

void tst_Comparison::verdictClasses()
{
    QFETCH(std::vector<double>, run);
    QFETCH(std::vector<double>, baseline);
    QFETCH(QString, verdict);
    QCOMPARE(verdictOf(run, baseline), verdict);
}

void tst_Comparison::cantTellSaysHowManySeedsWouldDecide()
{
    // Seed noise sd 0.02, 3 vs 3: half-width 0.045 around +0.015.
    const std::vector<double> base = {2.50, 2.52, 2.48}, run = {2.515, 2.535, 2.495};
    const QualityVerdict v = judgeQuality(run, base, 0.02);
    QCOMPARE(v.kind, QualityVerdict::Kind::CantTell);
    // Within the tolerance: "same" needs a half-width of 0.02 - 0.015.
    QVERIFY(std::fabs(v.decidingHalfWidth - 0.005) < 1e-12);
    // At the seeds it names, the interval (same spreads) is that narrow; one fewer is not.
    const auto width = [](int64_t n) {
        return studentTQuantile(0.975, double(2 * n - 2)) * 0.02 * std::sqrt(2.0 / double(n));
    };
    QVERIFY(width(v.seedsPerSide) <= 0.005);
    QVERIFY(width(v.seedsPerSide - 1) > 0.005);
    QCOMPARE(
        QString::fromStdString(v.text()),
        QString("can't tell yet: Δ +0.015 ± 0.045 nats, 3 vs 3 seeds; add seeds (about %1 more each to resolve ±0.005)")
            .arg(v.seedsPerSide - 3));
    // Beyond the tolerance but within the noise: showing the difference needs a half-width below it.
    const QualityVerdict beyond = judgeQuality({2.53, 2.55, 2.51}, base, 0.02);
    QCOMPARE(beyond.kind, QualityVerdict::Kind::CantTell);
    QVERIFY(std::fabs(beyond.decidingHalfWidth - 0.03) < 1e-12);
    // Just inside the tolerance nothing feasible decides, and it says so.
    const QualityVerdict atTolerance = judgeQuality({2.5199, 2.5399, 2.4999}, base, 0.02);
    QCOMPARE(atTolerance.kind, QualityVerdict::Kind::CantTell);
    QVERIFY2(atTolerance.text().find("no feasible number of seeds") != std::string::npos, atTolerance.text().c_str());
}

void tst_Comparison::oneSeedASideFallsBackToTheTolerance()
{
    QCOMPARE(verdictOf({2.51}, {2.50}),
             QString("same quality by the 0.020 tolerance (Δ +0.010 nats; 1 vs 1 seeds: seed noise unknown)"));
    QCOMPARE(verdictOf({2.55}, {2.50, 2.51, 2.49}),
             QString("worse quality by the 0.020 tolerance (Δ +0.050 nats; 1 vs 3 seeds: seed noise unknown)"));
    QCOMPARE(verdictOf({}, {2.50}), QString("quality not comparable (no common validation tokens)"));
    QCOMPARE(verdictOf({std::nan("")}, {2.50}), QString("quality not comparable (no common validation tokens)"));
}

void tst_Comparison::groupsCompareTheirMeansAndMedians()
{
    GroupSummary base = group("fp32", {2.500, 2.504, 2.496});
    GroupSummary bf16 = group("bf16", {2.503, 2.507, 2.499});
    // Throughput and peak: medians over seeds, with their range.
    const double rates[] = {2000, 2500, 2100};
    for (int i = 0; i < 3; ++i) {
        bf16.replicates[size_t(i)].throughput.median = rates[i];
        bf16.replicates[size_t(i)].peakBytes = 500 + i;
    }
    bf16.replicates[1].instabilities = {{EventKind::LossSpike, 2}};
    bf16.replicates[2].instabilities = {{EventKind::LossSpike, 1}, {EventKind::SkippedStep, 2}};
    const auto rows = compare(base, {base, bf16}, 0.02);
    const ComparisonRow &r = rows[1];
    QCOMPARE(r.seeds, int64_t(3));
    QVERIFY(std::fabs(r.validationLoss - 2.503) < 1e-12);
    QVERIFY(std::fabs(r.validationSd - 0.004) < 1e-12);
    QVERIFY(std::fabs(r.samplingError - 0.2 / std::sqrt(32.0)) < 1e-12);
    QCOMPARE(r.tokensPerSecond.median, 2100.0);
    QCOMPARE(r.tokensPerSecond.min, 2000.0);
    QCOMPARE(r.tokensPerSecond.max, 2500.0);
    QCOMPARE(r.speedup, 2.1);
    QCOMPARE(r.peakBytes, int64_t(501));
    QCOMPARE(QString::fromStdString(verdictText(r)),
             QString("same quality (Δ +0.003 ± 0.009 nats, 3 vs 3 seeds), 2.10x faster, saves 50% memory; "
                     "unstable: 3 loss spikes, 2 skipped steps"));
    // A seed that did not complete is left out of the numbers and named.
    bf16.replicates[0].run.outcome = Outcome::Diverged;
    const ComparisonRow diverged = compare(base, {bf16}, 0.02).front();
    QCOMPARE(diverged.completed, int64_t(2));
    QCOMPARE(diverged.outcome, std::optional(Outcome::Diverged));
    QVERIFY2(verdictText(diverged).find("2 vs 3 seeds") != std::string::npos, verdictText(diverged).c_str());
    QVERIFY2(verdictText(diverged).find("1 of 3 seeds did not complete") != std::string::npos,
             verdictText(diverged).c_str());
}

void tst_Comparison::runsGroupInOrderWithRerunsReplaced()
{
    std::vector<RunSummary> runs = {replicate("fp32", "fp32 seed 1", 2.5), replicate("bf16", "bf16 seed 1", 2.5),
                                    replicate("fp32", "fp32 seed 2", 2.6), replicate("", "alone", 2.7),
                                    replicate("fp32", "fp32 seed 1", 2.4)}; // a rerun of seed 1
    runs.back().run.id = 99;
    const auto groups = groupRuns(runs);
    QCOMPARE(groups.size(), size_t(3));
    QCOMPARE(groups[0].name, std::string("fp32"));
    QCOMPARE(groups[0].seeds(), int64_t(2));
    QCOMPARE(groups[0].replicates[0].run.id, int64_t(99));
    QCOMPARE(groups[1].name, std::string("bf16"));
    QCOMPARE(groups[2].name, std::string("alone")); // no group: a group of its own name
}

void tst_Comparison::speedsOnDifferentMachinesCompareThroughTheIndexOrNotAtAll()
{
    // The technique ran on a machine twice as fast (its index says so) at twice the tokens/s: per
    // unit of machine speed, the same speed; quality and memory are judged as ever.
    RunSummary baseline = replicate("fp32", "fp32", 3.0, 1000, 1000);
    RunSummary technique = replicate("bf16", "bf16", 3.0, 2000, 500);
    baseline.machineIdentity = {"AMD EPYC 7B13", 2, "cpu", "", "2.11.0"};
    technique.machineIdentity = {"Intel(R) Xeon(R) Processor", 2, "cpu", "", "2.11.0"};
    baseline.machine.medianGflops = 50;
    technique.machine.medianGflops = 100;
    std::vector<ComparisonRow> rows = compare(baseline, {technique}, 0.02);
    QCOMPARE(rows.size(), size_t(1));
    QCOMPARE(rows[0].acrossMachines,
             std::string("Intel(R) Xeon(R) Processor, 2 CPUs, cpu, LibTorch 2.11.0 vs AMD EPYC 7B13, 2 CPUs, cpu, "
                         "LibTorch 2.11.0"));
    QCOMPARE(rows[0].speedup, 1.0);
    QCOMPARE(int(rows[0].speedCall), int(SpeedCall::Same));
    QVERIFY2(QString::fromStdString(verdictText(rows[0]))
                 .contains("same speed per unit of machine speed (different machines: "),
             verdictText(rows[0]).c_str());
    QCOMPARE(rows[0].memorySaved, 0.5);

    // A run without the index: the speed is not called.
    technique.machine.medianGflops = 0;
    rows = compare(baseline, {technique}, 0.02);
    QCOMPARE(rows[0].speedup, 0.0);
    QCOMPARE(int(rows[0].speedCall), int(SpeedCall::Unknown));
    QVERIFY2(QString::fromStdString(verdictText(rows[0])).contains("speed not called: different machines ("),
             verdictText(rows[0]).c_str());
    QCOMPARE(int(rows[0].quality.kind), int(QualityVerdict::Kind::Same));

    // One kind of machine: tokens/s compare directly, as before.
    technique.machineIdentity = baseline.machineIdentity;
    rows = compare(baseline, {technique}, 0.02);
    QCOMPARE(rows[0].speedup, 2.0);
    QVERIFY(rows[0].acrossMachines.empty());
}

namespace {

// A group of replicates at `rates` tokens/s, each run's five blocks of steps spread by ±`spread`
// around its rate (alternately above and below): a machine whose single steps vary that much.
GroupSummary timedGroup(const std::string &name, const std::vector<double> &rates, double spread)
{
    GroupSummary g{name, {}};
    for (size_t i = 0; i < rates.size(); ++i) {
        RunSummary r = replicate(name, name + " seed " + std::to_string(i + 1), 3.0, rates[i]);
        const double x = rates[i];
        r.throughput.blocks = {x * (1 - spread), x * (1 + spread), x, x * (1 - spread / 2), x * (1 + spread / 2)};
        r.throughput.p10 = x * (1 - spread);
        r.throughput.p90 = x * (1 + spread);
        g.replicates.push_back(r);
    }
    return g;
}

} // namespace

// Faster, slower, the same or too noisy as the speed-up's interval says: over seeds where both
// sides have two, over blocks of steps for a run alone; never by the steps' spread alone.
void tst_Comparison::speedCallsFollowTheInterval_data()
{
    QTest::addColumn<std::vector<double>>("rates");
    QTest::addColumn<double>("spread");
    QTest::addColumn<std::vector<double>>("baselineRates");
    QTest::addColumn<int>("call");
    QTest::addColumn<QString>("words");
    // The LSTM: 8.2x over two seeds, the steps within a run spread by 106%.
    QTest::newRow("8x over seeds, noisy steps")
        << std::vector<double>{8040, 8360} << 0.53 << std::vector<double>{990, 1010} << int(SpeedCall::Faster)
        << "8.20x faster";
    QTest::newRow("1.02x over seeds, wide spread")
        << std::vector<double>{900, 1140} << 0.05 << std::vector<double>{990, 1010} << int(SpeedCall::TooNoisy)
        << "speed too noisy to call (1.02x, its 95% interval 0.89-1.15 crosses 1 ± 3%: add seeds)";
    QTest::newRow("1.01x over seeds, narrow") << std::vector<double>{1008, 1012} << 0.01
                                              << std::vector<double>{999, 1001} << int(SpeedCall::Same) << "same speed";
    QTest::newRow("1.01x over seeds, steps spread 30%")
        << std::vector<double>{1008, 1012} << 0.30 << std::vector<double>{999, 1001} << int(SpeedCall::TooNoisy)
        << "add seeds or steps";
    // Two seeds a side whose steady steps are steady: their blocks call the speed-up, and the seeds'
    // own disagreement (up to 9% here) only widens the interval to hold every seed-by-seed ratio.
    // The Lightning script (BF16 against FP32, "0.71x [0.03-15.27]" over two seeds) and
    // Hugging Face Trainer ("0.51x [0.02-16.66]").
    QTest::newRow("Lightning's 0.71x over two seeds")
        << std::vector<double>{680, 740} << 0.03 << std::vector<double>{960, 1040} << int(SpeedCall::Slower)
        << "29% slower";
    QTest::newRow("the Trainer's 0.51x over two seeds")
        << std::vector<double>{480, 540} << 0.03 << std::vector<double>{950, 1050} << int(SpeedCall::Slower)
        << "49% slower";
    QTest::newRow("half the speed over seeds")
        << std::vector<double>{495, 505} << 0.30 << std::vector<double>{990, 1010} << int(SpeedCall::Slower)
        << "50% slower";
    QTest::newRow("2x, one seed a side, steady blocks")
        << std::vector<double>{2000} << 0.01 << std::vector<double>{1000} << int(SpeedCall::Faster) << "2.00x faster";
    QTest::newRow("1.02x, one seed a side, blocks spread 20%")
        << std::vector<double>{1020} << 0.20 << std::vector<double>{1000} << int(SpeedCall::TooNoisy)
        << "add seeds or steps";
    QTest::newRow("1.00x, one seed a side, steady blocks")
        << std::vector<double>{1000} << 0.004 << std::vector<double>{1000} << int(SpeedCall::Same) << "same speed";
}

void tst_Comparison::speedCallsFollowTheInterval()
{
    QFETCH(std::vector<double>, rates);
    QFETCH(double, spread);
    QFETCH(std::vector<double>, baselineRates);
    QFETCH(int, call);
    QFETCH(QString, words);
    const std::vector<ComparisonRow> rows = compare(timedGroup("fp32", baselineRates, 0.01),
                                                    {timedGroup("bf16", rates, spread)}, 0.02);
    const ComparisonRow &row = rows.front();
    QCOMPARE(int(row.speedCall), call);
    QVERIFY2(QString::fromStdString(verdictText(row)).contains(words), verdictText(row).c_str());
    // The cell shows the interval the call was made from, about the speed-up.
    const Spread &i = row.speedupInterval;
    QVERIFY(i.min < row.speedup && row.speedup < i.max);
    QCOMPARE(speedCell(row), formatted("%.2fx [%.2f-%.2f]", row.speedup, i.min, i.max));
    QCOMPARE(int(callSpeed(i)), call);
}

// The two levels of the speed-up's interval, one against the other: two seeds that agree give an
// interval no wider than one seed's blocks; seeds that disagree widen it to hold each of them.
void tst_Comparison::twoSeedsResolveAtLeastWhatOneSeedsBlocksDo()
{
    const auto intervalOf = [](const std::vector<double> &rates, const std::vector<double> &baseline) {
        return compare(timedGroup("fp32", baseline, 0.05), {timedGroup("bf16", rates, 0.05)}, 0.02)
            .front()
            .speedupInterval;
    };
    const Spread one = intervalOf({700}, {1000});
    const Spread two = intervalOf({700, 700}, {1000, 1000});
    QVERIFY2(two.max - two.min <= one.max - one.min,
             qPrintable(QString("%1-%2 against %3-%4").arg(two.min).arg(two.max).arg(one.min).arg(one.max)));
    const Spread disagreeing = intervalOf({600, 800}, {1000, 1000});
    QVERIFY(disagreeing.min <= 0.6 + 1e-12 && disagreeing.max >= 0.8 - 1e-12);
    QVERIFY(disagreeing.max - disagreeing.min > two.max - two.min);
}

// The baseline against itself is "1.00x", not a call ("1.00x (1.00-1.00), too noisy" was shown);
// a run alone with too few steps has no interval, and its speed is not called.
void tst_Comparison::theBaselineRowIsNotJudged()
{
    const GroupSummary fp32 = timedGroup("fp32", {1000, 1010}, 0.5);
    GroupSummary short_ = timedGroup("short", {3000}, 0.01);
    short_.replicates[0].throughput.blocks = {3000};
    const std::vector<ComparisonRow> rows = compare(fp32, {fp32, short_}, 0.02);
    QCOMPARE(rows[0].action, Action::Baseline);
    QCOMPARE(int(rows[0].speedCall), int(SpeedCall::Unknown));
    QCOMPARE(speedCell(rows[0]), std::string("1.00x"));
    QCOMPARE(int(rows[1].speedCall), int(SpeedCall::Unknown));
    QVERIFY2(QString::fromStdString(verdictText(rows[1])).contains("speed not called (2.99x): too few steady steps"),
             verdictText(rows[1]).c_str());
    QCOMPARE(speedCell(rows[1]), std::string("2.99x"));
}

// TF32 changes a GPU's FP32 speed, not the technique: the speed shown says it, and its MFU is
// against the TF32 peak.
void tst_Comparison::aTf32RunsSpeedSaysTf32()
{
    RunSummary fp32 = replicate("fp32", "fp32", 2.0, 1000), tf32 = replicate("fp32-tf32", "fp32-tf32", 2.0, 3000);
    fp32.config = loadRunConfig("default", "", {"runtime.device=cuda"});
    tf32.config = loadRunConfig("default", "", {"runtime.device=cuda", "precision.tf32=true"});
    const auto rows = compare(fp32, {fp32, tf32}, 0.02);
    QCOMPARE(rows.size(), size_t(2));
    QCOMPARE(rows.front().name + "|" + rows.front().speedNote, std::string("fp32|"));
    QCOMPARE(rows.back().name + "|" + rows.back().speedNote, std::string("fp32-tf32|TF32"));
    const QString wide = QString::fromStdString(formatComparison(rows, "fp32", 0.02));
    QVERIFY2(wide.contains(QRegularExpression(QStringLiteral("  3000 \\([0-9]+-[0-9]+\\) TF32  "))), qPrintable(wide));
}

void tst_Comparison::instabilitiesAreCountedInWords()
{
    QCOMPARE(QString::fromStdString(instabilityText({})), QString());
    QCOMPARE(QString::fromStdString(instabilityText({{EventKind::LossSpike, 1}, {EventKind::NonFinite, 0}})),
             QString("unstable: 1 loss spike"));
    QCOMPARE(QString::fromStdString(
                 instabilityText({{EventKind::GradNormSpike, 2}, {EventKind::NonFinite, 1}, {EventKind::Warning, 4}})),
             QString("unstable: 2 gradient-norm spikes, 1 non-finite value"));
}

void tst_Comparison::numericsSayWhatFp16AndBf16WouldDo()
{
    const double na = kNotApplicable;
    const std::vector<TensorNumerics> rows = {
        {24, kAllParameters, 0.5, 0.5, 0.5, 1024, 0.5, na}, // an earlier step: not the one reported
        {49, kAllParameters, 0.001, 0.3, 0.00002, 32768, 0.25, na},
        {49, "blocks.0", na, na, na, na, na, 85.25},
        {49, "blocks.1", na, na, na, na, na, 120.5},
        {49, "blocks.1.attention.qkv.bias", 0.33, 0.1, 0.01, 32768, 0.1, na},
        {49, "blocks.1.mlp.fc.weight", 0.0005, 0.4, 0, 32768, 0.6, na},
    };
    QCOMPARE(QString::fromStdString(numericsText(rows)),
             QString("at step 49: FP16 without a scaler would zero 0.10% of the gradient elements (33% of "
                     "blocks.1.attention.qkv.bias's), 0.0020% at the scale of 2^15 a dynamic scaler would hold; BF16 "
                     "weights would lose 25% of AdamW's updates (60% of blocks.1.mlp.fc.weight's); largest activation "
                     "120 in blocks.1 (FP16 holds 65504)"));
    QCOMPARE(QString::fromStdString(numericsText({})), QString());
}

QTEST_APPLESS_MAIN(tst_Comparison)
#include "tst_comparison.moc"
