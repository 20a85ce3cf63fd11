// SPDX-License-Identifier: MIT
#include "core/analysis/decisions.h"
#include "core/analysis/decisionwords.h"
#include "core/analysis/report.h"
#include "core/analysis/runsummary.h"
#include "core/analysis/runtables.h"
#include "core/analysis/runtext.h"
#include "core/analysis/studycomparison.h"
#include "core/analysis/studytext.h"
#include "core/analysis/texttable.h"
#include "core/config/config.h"
#include "core/memorymodel/modelshape.h"
#include "core/store/store.h"

#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <map>
#include <tuple>

using namespace optlog;

namespace {

RunSummary summary(const std::string &name, double tokensPerSecond, int64_t peak,
                   std::vector<ValidationPoint> validation)
{
    RunSummary s;
    s.run.name = name;
    s.run.outcome = Outcome::Completed;
    s.throughput.median = tokensPerSecond;
    s.throughput.p10 = tokensPerSecond * 0.99;
    s.throughput.p90 = tokensPerSecond * 1.01;
    s.throughput.blocks = {tokensPerSecond * 0.99, tokensPerSecond * 1.01, tokensPerSecond, tokensPerSecond * 0.995,
                           tokensPerSecond * 1.005};
    s.peakBytes = peak;
    s.validation = std::move(validation);
    return s;
}

} // namespace

class tst_Analysis : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void steadyThroughputSkipsWarmup();
    void validationIsInterpolatedAtTokens();
    void comparesAtMatchedTokens();
    void verdictsInWords_data();
    void verdictsInWords();
    void decisionsFitATerminal();
    void textTablesElideAndWrap();
    void noisyThroughputIsNotCalled();
    void aDifferentValidationIsNamedInTheVerdict();
    void memoryByRoleNamesEachStatesDtype();
    void steadyMachineIsNotFlagged();
    void slowingMachineIsFlaggedAndNormalised();
    void modelFlopsPerTokenFollowsTheFormula();
    void mfuIsAgainstTheMeasuredPeakOfTheComputeDtype();
    void comparesTheNewestOfEachNameEachAgainstItsBaseline();
    void comparisonRefusesWhatIsNotInTheStudy();
    void reportsShowHostileNamesAsText();
    void runTextsReadAStudyWithAnEnvironmentThatIsNotJson();
    void outcomeTextSaysHowARunEnded_data();
    void outcomeTextSaysHowARunEnded();
};

void tst_Analysis::steadyThroughputSkipsWarmup()
{
    std::vector<StepMetrics> metrics;
    for (int step = 0; step < 13; ++step) {
        StepMetrics m;
        m.step = step;
        m.tokensPerSecond = step < 3 ? 10.0 : 100.0 + step; // slow warm-up steps must not count
        metrics.push_back(m);
    }
    const ThroughputSummary s = steadyThroughput(metrics, 3);
    QCOMPARE(s.steps, int64_t(10));
    QCOMPARE(s.median, 107.5); // median of 103..112
    QVERIFY(s.p10 > 103 && s.p10 < s.median);
    QVERIFY(s.p90 > s.median && s.p90 < 112);
    // Five contiguous blocks of two steps, each its median: what a run alone gives an interval.
    QCOMPARE(s.blocks, (std::vector<double>{103.5, 105.5, 107.5, 109.5, 111.5}));
    QCOMPARE(steadyThroughput(metrics, 10).blocks, (std::vector<double>{111})); // three steps: one block
}

void tst_Analysis::validationIsInterpolatedAtTokens()
{
    const std::vector<ValidationPoint> points = {{9, 1000, 4.0}, {19, 2000, 3.0}};
    QCOMPARE(validationAt(points, 1000), 4.0);
    QCOMPARE(validationAt(points, 1500), 3.5);
    QVERIFY(std::isnan(validationAt(points, 2500)));
    QVERIFY(std::isnan(validationAt(points, 500)));
}

void tst_Analysis::comparesAtMatchedTokens()
{
    // The run saw half the tokens: it is compared at 1000 tokens, not at its last step.
    const RunSummary base = summary("base", 1000, 100, {{9, 1000, 4.0}, {19, 2000, 3.0}});
    const RunSummary run = summary("half", 1000, 100, {{4, 500, 4.5}, {9, 1000, 3.9}});
    const auto rows = compare(base, {base, run}, 0.02);
    QCOMPARE(rows[1].matchedTokens, int64_t(1000));
    QCOMPARE(rows[1].validationLoss, 3.9);
    QVERIFY(std::fabs(rows[1].deltaLoss - (-0.1)) < 1e-12);
    QCOMPARE(rows[0].deltaLoss, 0.0);
}

void tst_Analysis::verdictsInWords_data()
{
    QTest::addColumn<double>("finalLoss");
    QTest::addColumn<double>("tokensPerSecond");
    QTest::addColumn<qint64>("peak");
    QTest::addColumn<QString>("verdict");
    QTest::addColumn<QString>("action");
    // One seed a side: judged by the tolerance alone, and said so.
    const QString noise = "1 vs 1 seeds: seed noise unknown";
    QTest::newRow("same") << 3.01 << 1010.0 << qint64(1000)
                          << "same quality by the 0.020 tolerance (Δ +0.010 nats; " + noise
                                 + "), same speed, same memory"
                          << "same quality, not faster here";
    QTest::newRow("faster, smaller") << 3.0 << 1500.0 << qint64(600)
                                     << "same quality by the 0.020 tolerance (Δ +0.000 nats; " + noise
                                            + "), 1.50x faster, saves 40% memory"
                                     << "take it";
    QTest::newRow("smaller, slower") << 3.0 << 800.0 << qint64(600)
                                     << "same quality by the 0.020 tolerance (Δ +0.000 nats; " + noise
                                            + "), 20% slower, saves 40% memory"
                                     << "take it where memory binds";
    QTest::newRow("slower, worse, bigger")
        << 3.2 << 800.0 << qint64(1200)
        << "worse quality by the 0.020 tolerance (Δ +0.200 nats; " + noise + "), 20% slower, uses 20% more memory"
        << "worse quality";
    QTest::newRow("faster, worse") << 3.2 << 1500.0 << qint64(600)
                                   << "worse quality by the 0.020 tolerance (Δ +0.200 nats; " + noise
                                          + "), 1.50x faster, saves 40% memory"
                                   << "worse quality";
    QTest::newRow("better") << 2.9 << 1000.0 << qint64(1000)
                            << "better quality by the 0.020 tolerance (Δ -0.100 nats; " + noise
                                   + "), same speed, same memory"
                            << "take it";
}

void tst_Analysis::verdictsInWords()
{
    QFETCH(double, finalLoss);
    QFETCH(double, tokensPerSecond);
    QFETCH(qint64, peak);
    QFETCH(QString, verdict);
    QFETCH(QString, action);
    const RunSummary base = summary("base", 1000, 1000, {{9, 1000, 3.0}});
    const RunSummary run = summary("run", tokensPerSecond, peak, {{9, 1000, finalLoss}});
    const std::vector<ComparisonRow> rows = compare(base, {base, run}, 0.02);
    QCOMPARE(QString::fromStdString(verdictText(rows[1])), verdict);
    QCOMPARE(QString::fromLatin1(actionText(rows[1].action)), action);
    QCOMPARE(rows[0].action, Action::Baseline);
}

// What a terminal shows: every line within 120 columns, however long the names and verdicts;
// the verdicts in full below the table; the numerics as a table of their risks.
void tst_Analysis::decisionsFitATerminal()
{
    const std::string longName = "autocast-bf16-with-a-dynamic-loss-scaler-and-a-name-from-a-sweep-over-everything";
    std::vector<GroupSummary> groups;
    groups.push_back({"fp32", {}});
    groups.push_back({longName, {}});
    groups.push_back({"undecided", {}});
    for (int seed = 0; seed < 3; ++seed) {
        groups[0].replicates.push_back(
            summary("fp32-s" + std::to_string(seed), 1000 + seed, 1000, {{9, 1000, 3.0 + 0.002 * seed}}));
        RunSummary faster = summary(longName + "-s" + std::to_string(seed), 1500 + 10 * seed, 600,
                                    {{9, 1000, 3.001 + 0.002 * seed}});
        // FP16 would zero 2% of the gradient (trouble) and BF16 lose 5% of the updates (close to it).
        faster.numerics = {{9, kAllParameters, 0.02, 0.03, 0.0, 1024, 0.05, kNotApplicable},
                           {9, "blocks.1.attention.qkv.bias", 0.33, 0.4, 0.0, 1024, 0.2, kNotApplicable},
                           {9, "blocks.1", kNotApplicable, kNotApplicable, kNotApplicable, kNotApplicable,
                            kNotApplicable, 812}};
        faster.run.group = longName;
        groups[1].replicates.push_back(faster);
        // Seeds that straddle the tolerance: more of them would decide.
        groups[2].replicates.push_back(
            summary("undecided-s" + std::to_string(seed), 1000, 1000, {{9, 1000, 3.0 + 0.03 * seed}}));
    }
    const std::vector<ComparisonRow> rows = compare(groups[0], groups, 0.02);
    QCOMPARE(rows[1].action, Action::TakeIt);
    QCOMPARE(rows[2].action, Action::AddSeeds);
    QCOMPARE(QString::fromLatin1(actionText(rows[2].action)), QStringLiteral("can't tell yet: add seeds"));
    QCOMPARE(riskLevel(NumericsRisk::Fp16Underflow, rows[1].risks.fp16Underflow), RiskLevel::Trouble);
    QCOMPARE(riskLevel(NumericsRisk::Bf16LostUpdates, rows[1].risks.bf16LostUpdates), RiskLevel::Watch);
    QCOMPARE(riskLevel(NumericsRisk::LargestActivation, rows[1].risks.largestActivation), RiskLevel::Fine);
    QCOMPARE(rows[1].risks.underflowTensor, std::string("blocks.1.attention.qkv.bias"));

    const std::string text = formatDecisions(rows, "fp32", 0.02);
    const QStringList lines = QString::fromStdString(text).split(QLatin1Char('\n'));
    for (const QString &line : lines)
        QVERIFY2(line.size() <= 120, qPrintable(QStringLiteral("%1 columns: %2").arg(line.size()).arg(line)));
    QVERIFY2(lines[0].startsWith(QStringLiteral("run")) && lines[0].contains(QStringLiteral("action")),
             qPrintable(lines[0]));
    QVERIFY2(lines[2].contains(QStringLiteral("take it")) && lines[2].contains(QStringLiteral("saves 40%")),
             qPrintable(lines[2]));
    QVERIFY2(lines[2].contains(QStringLiteral("1.5")) && lines[2].contains(QStringLiteral("±")), qPrintable(lines[2]));
    // The long name is cut in the table and whole in its verdict below, wrapped.
    QVERIFY(!lines[2].contains(QString::fromStdString(longName)));
    QVERIFY(QString::fromStdString(text).contains(QString::fromStdString(longName) + ": same quality"));
    // The numerics: one row per run that measured them, the trouble marked.
    const int numerics = int(lines.indexOf(QRegularExpression(QStringLiteral("run +step.*"))));
    QVERIFY2(numerics > 0, text.substr(text.size() / 2).c_str());
    QVERIFY2(lines[numerics + 1].contains(QStringLiteral("2.0% !!"))
                 && lines[numerics + 1].contains(QStringLiteral("5.0% !")),
             qPrintable(lines[numerics + 1]));
    // --wide keeps one line per run, whatever its width.
    const QStringList wide = QString::fromStdString(formatComparison(rows, "fp32", 0.02)).split(QLatin1Char('\n'));
    QVERIFY(wide[2].size() > 120);
}

void tst_Analysis::textTablesElideAndWrap()
{
    QCOMPARE(displayWidth("Δ ± –"), size_t(5));
    QCOMPARE(elided("ΔΔΔΔΔ", 3), std::string("ΔΔ~"));
    QCOMPARE(elided("abc", 3), std::string("abc"));
    QCOMPARE(wrapped("one two three four", 9, "  "), std::string("one two\n  three\n  four\n"));
    QCOMPARE(wrapped("", 9), std::string("\n"));
    TextTable table({{"name"}, {"n", TextTable::Align::Right}});
    table.addRow({"a-very-long-name-indeed", "12"});
    table.addRow({"b", "3"});
    QCOMPARE(table.render(14), std::string("name         n\na-very-lo~  12\nb            3\n"));
}

void tst_Analysis::noisyThroughputIsNotCalled()
{
    const RunSummary base = summary("base", 1000, 1000, {{9, 1000, 3.0}});
    RunSummary run = summary("run", 600, 1000, {{9, 1000, 3.0}});
    run.throughput.p10 = 200;
    run.throughput.p90 = 1000; // spread of 133% of the median: a busy machine
    run.throughput.blocks = {200, 1000, 600, 400, 800};
    const ComparisonRow row = compare(base, {run}, 0.02).front();
    QCOMPARE(QString::fromStdString(verdictText(row)),
             QString("same quality by the 0.020 tolerance (Δ +0.000 nats; 1 vs 1 seeds: seed noise unknown), "
                     "speed too noisy to call (0.60x, its 95% interval %1-%2 crosses 1 ± 3%: add seeds or steps), "
                     "same memory")
                 .arg(row.speedupInterval.min, 0, 'f', 2)
                 .arg(row.speedupInterval.max, 0, 'f', 2));
    QVERIFY(row.speedupInterval.min < 0.97 && row.speedupInterval.max > 1.03);
}

void tst_Analysis::aDifferentValidationIsNamedInTheVerdict()
{
    RunSummary base = summary("base", 1000, 1000, {{9, 1000, 3.0}});
    RunSummary longer = summary("T512", 1000, 1000, {{9, 1000, 3.2}});
    RunSummary bf16 = summary("bf16", 1000, 1000, {{9, 1000, 3.2}});
    base.config = loadRunConfig("default", "", {});
    longer.config = loadRunConfig("default", "", {"model.context_length=512", "data.eval_sequences=8"});
    bf16.config = loadRunConfig("default", "", {"precision.mode=autocast-bf16", "train.microbatch=4"});
    const auto rows = compare(base, {longer, bf16}, 0.02);
    const QString worse = "worse quality by the 0.020 tolerance (Δ +0.200 nats; 1 vs 1 seeds: seed noise unknown)";
    QCOMPARE(QString::fromStdString(verdictText(rows[0])),
             worse
                 + " (validated differently: model.context_length 512 vs 128, "
                   "data.eval_sequences 8 vs 32), same speed, same memory");
    // A technique's own fields do not change what validation measures.
    QCOMPARE(QString::fromStdString(verdictText(rows[1])), worse + ", same speed, same memory");
    // Without a readable config there is nothing to name.
    longer.config.reset();
    QCOMPARE(QString::fromStdString(verdictText(compare(base, {longer}, 0.02).front())),
             worse + ", same speed, same memory");
}

void tst_Analysis::memoryByRoleNamesEachStatesDtype()
{
    RunSummary plain = summary("fp32", 1000, 3 << 20, {});
    plain.memory = {{MemoryRole::Parameters, "float32", 1 << 20, MemorySource::Measured},
                    {MemoryRole::Parameters, "float32", 1 << 20,
                     MemorySource::Predicted}, // predictions stay out of this table
                    {MemoryRole::Gradients, "float32", 1 << 20, MemorySource::Measured},
                    {MemoryRole::OptimizerState, "float32", 2 << 20, MemorySource::Measured},
                    {MemoryRole::Peak, "mixed", 3 << 20, MemorySource::Measured}};
    RunSummary master = summary("master-bf16", 1000, 4 << 20, {});
    master.memory = {{MemoryRole::Parameters, "bfloat16", 1 << 19, MemorySource::Measured},
                     {MemoryRole::MasterWeights, "float32", 1 << 20, MemorySource::Measured},
                     {MemoryRole::SavedActivations, "mixed", 3 << 19, MemorySource::Measured}};
    const QStringList lines = QString::fromStdString(formatMemoryByRole({plain, master})).split(QLatin1Char('\n'));
    QVERIFY(lines.size() >= 3);
    QCOMPARE(lines[0].simplified(),
             QString("memory by role params grads masters optimizer activations temporaries peak"));
    QCOMPARE(lines[1].simplified(), QString("fp32 1.0 MiB fp32 1.0 MiB fp32 - 2.0 MiB fp32 - - 3.0 MiB"));
    // Activations hold several dtypes: the note says so once instead of "mixed" in every row.
    QCOMPARE(lines[2].simplified(), QString("master-bf16 512.0 KiB bf16 - 1.0 MiB fp32 - 1.5 MiB - 4.0 MiB"));
    // Every cell under its heading: the lines are as wide as the header.
    QCOMPARE(lines[1].size(), lines[0].size());
    QCOMPARE(lines[2].size(), lines[0].size());
}

namespace {

// 100 steps at 5,000 tokens/s, the reference kernel timed every 10 steps at `gflops(step)`;
// the run's own speed follows the machine's.
std::vector<StepMetrics> withMachine(double (*gflops)(int64_t))
{
    std::vector<StepMetrics> rows;
    for (int64_t s = 0; s < 100; ++s) {
        StepMetrics m;
        m.step = s;
        m.tokens = (s + 1) * 1000;
        m.tokensPerSecond = 5000.0 * gflops(s) / 100.0;
        m.machineGflops = s % 10 == 9 ? gflops(s) : 0.0;
        rows.push_back(m);
    }
    return rows;
}

} // namespace

void tst_Analysis::steadyMachineIsNotFlagged()
{
    const MachineSpeed speed = machineSpeed(withMachine([](int64_t s) { return s % 20 == 9 ? 98.0 : 102.0; }), 3);
    QCOMPARE(speed.probes, int64_t(10));
    QVERIFY(speed.variation < MachineSpeed::kTolerance);
    QVERIFY(!speed.flagged());
    QCOMPARE(speed.describe(), std::string());
}

void tst_Analysis::slowingMachineIsFlaggedAndNormalised()
{
    // The machine halves its speed after step 50 (a neighbour arrives): the run slows with it.
    const MachineSpeed speed = machineSpeed(withMachine([](int64_t s) { return s < 50 ? 100.0 : 50.0; }), 3);
    QVERIFY(speed.flagged());
    QCOMPARE(speed.slowdown, 0.5);
    QVERIFY2(speed.describe().rfind("the machine slowed by 50% during this run", 0) == 0, speed.describe().c_str());
    // Five probes at 100 GFLOP/s and five at 50: the median machine is 75. Normalised to it, 5,000
    // tokens/s on the fast machine and 2,500 on the slow one are both 3,750 (steps 50-58, still
    // scaled by the last fast probe, come out at 1,875, and are too few to move the median).
    QCOMPARE(speed.medianGflops, 75.0);
    QVERIFY2(std::fabs(speed.normalisedMedian - 3750.0) < 1e-9, qPrintable(QString::number(speed.normalisedMedian)));
}

void tst_Analysis::modelFlopsPerTokenFollowsTheFormula()
{
    // The default preset's shape, worked by hand: 6 x 3,257,856 = 19,547,136 for the weights'
    // matmuls forward and backward, 12 x 4 x 128 x 256 = 1,572,864 for attention's two.
    QCOMPARE(modelFlopsPerToken(3257856, 4, 128, 256), 21120000.0);
    QCOMPARE(modelFlopsPerToken(1000, 1, 10, 8), 6960.0); // 6,000 + 960
}

void tst_Analysis::mfuIsAgainstTheMeasuredPeakOfTheComputeDtype()
{
    QTemporaryDir dir;
    Store store(dir.filePath("mfu.sqlite").toStdString());
    // The dtype's peak, from the run's environment; FP16 has one only where it ran (CUDA). The
    // default config's model does 21,120,000 FLOPs per token, at 5,000 tokens/s 105.6 GFLOP/s:
    // 52.8% of 200, 26.4% of 400, 13.2% of 800.
    struct Expected
    {
        std::string dtype;
        double mfu;
    };
    const std::map<std::string, Expected> expected = {{"fp32", {"float32", 0.528}},
                                                      {"autocast-bf16", {"bfloat16", 0.264}},
                                                      {"master-fp16", {"float16", 0.132}}};
    for (const auto &[mode, want] : expected) {
        RunConfig config;
        config.precision.mode = mode;
        config.memory.warmupSteps = 1;
        const int64_t id = store.createRun(mode, toToml(config));
        store.setEnvironment(
            id, R"({"matmul_peak": {"float32_gflops": 200.0, "bfloat16_gflops": 400.0, "float16_gflops": 800.0}})");
        std::vector<StepMetrics> steps(10);
        for (int64_t s = 0; s < 10; ++s) {
            steps[s].step = s;
            steps[s].tokens = (s + 1) * 1000;
            steps[s].tokensPerSecond = 5000;
        }
        store.appendMetrics(id, steps);
        store.finishRun(id, Outcome::Completed, 9, "");
        const RunSummary summary = summarize(store, *store.findRun(mode));
        QCOMPARE(summary.flopsPerToken, 21120000.0);
        QCOMPARE(summary.peakDtype, want.dtype);
        QVERIFY2(std::fabs(summary.mfu() - want.mfu) < 1e-12, qPrintable(QString::number(summary.mfu())));
    }
    // Over ranks the tokens/s count every rank's, so the peak is each rank's (rank 0's) once per rank.
    RunConfig config;
    config.memory.warmupSteps = 1;
    config.distributed.ranks = 4;
    const int64_t id = store.createRun("ranks", toToml(config));
    store.setEnvironment(id, R"({"matmul_peak": {"float32_gflops": 200.0}})");
    std::vector<StepMetrics> steps(10);
    for (int64_t s = 0; s < 10; ++s) {
        steps[s].step = s;
        steps[s].tokens = (s + 1) * 4000;
        steps[s].tokensPerSecond = 30000;
    }
    store.appendMetrics(id, steps);
    store.finishRun(id, Outcome::Completed, 9, "");
    const RunSummary summary = summarize(store, *store.findRun("ranks"));
    QCOMPARE(summary.peakGflops, 800.0);
    QVERIFY(std::fabs(summary.mfu() - 0.792) < 1e-12); // 30,000 x 21,120,000 = 633.6 GFLOP/s over 800
    QVERIFY(!summary.peakBeatenByRun);

    // A run faster than the peak it was judged against (one measured on a busier machine): the
    // peak is the best the machine showed, the run's own, and MFU 100%, never above.
    const int64_t beaten = store.createRun("beaten", toToml(config));
    store.setEnvironment(beaten, R"({"matmul_peak": {"float32_gflops": 150.0}})");
    for (auto &step : steps)
        step.tokensPerSecond = 40000; // 844.8 GFLOP/s, over 4 x 150
    store.appendMetrics(beaten, steps);
    store.finishRun(beaten, Outcome::Completed, 9, "");
    const RunSummary fast = summarize(store, *store.findRun("beaten"));
    QVERIFY(fast.peakBeatenByRun);
    QCOMPARE(fast.peakGflops, fast.achievedGflops);
    QCOMPARE(fast.mfu(), 1.0);
    QVERIFY2(formatRunDetail(store, *store.findRun("beaten")).find("the run's own rate, above every peak measured for it")
                 != std::string::npos,
             formatRunDetail(store, *store.findRun("beaten")).c_str());

    // On a CPU, against the peak of the path the run's products took (here the primitive's 264, not
    // the dtype's best, 400): 40% (105.6 over 264). Without a recorded path, the dtype's best.
    for (const auto &[name, environment, peak, path] :
         {std::tuple{"on the primitive",
                     R"({"matmul_peak": {"bfloat16_gflops": 400.0, "path_gflops": {"bfloat16": {"aten": 400.0,
                         "primitive": 264.0}}}, "product_path": {"dtype": "bfloat16", "path": "primitive"}})",
                     264.0, "primitive"},
          std::tuple{"before paths", R"({"matmul_peak": {"bfloat16_gflops": 400.0}})", 400.0, ""}}) {
        RunConfig bf16;
        bf16.precision.mode = "autocast-bf16";
        bf16.memory.warmupSteps = 1;
        const int64_t run = store.createRun(name, toToml(bf16));
        store.setEnvironment(run, environment);
        std::vector<StepMetrics> rates(10);
        for (int64_t s = 0; s < 10; ++s) {
            rates[s].step = s;
            rates[s].tokens = (s + 1) * 1000;
            rates[s].tokensPerSecond = 5000;
        }
        store.appendMetrics(run, rates);
        store.finishRun(run, Outcome::Completed, 9, "");
        const RunSummary onPath = summarize(store, *store.findRun(name));
        QCOMPARE(onPath.peakGflops, peak);
        QCOMPARE(onPath.peakPath, std::string(path));
        QVERIFY2(std::fabs(onPath.mfu() - 105.6 / peak) < 1e-12, qPrintable(QString::number(onPath.mfu())));
    }
}

void tst_Analysis::outcomeTextSaysHowARunEnded_data()
{
    QTest::addColumn<QString>("outcome"); // empty: running
    QTest::addColumn<int>("step");
    QTest::addColumn<QString>("shortText");
    QTest::addColumn<QString>("withMessage");
    QTest::newRow("running") << "" << -1 << "running"
                             << "running";
    QTest::newRow("completed") << "completed" << 99 << "completed"
                               << "completed";
    QTest::newRow("oom") << "oom" << 6 << "oom at step 6"
                         << "oom at step 6: the reason";
    // Not "crashed at step 0", which reads as a step that completed.
    QTest::newRow("crashed before a step") << "crashed" << -1 << "crashed before its first step"
                                           << "crashed before its first step: the reason";
}

void tst_Analysis::outcomeTextSaysHowARunEnded()
{
    QFETCH(QString, outcome);
    QFETCH(int, step);
    QFETCH(QString, shortText);
    QFETCH(QString, withMessage);
    RunRecord run;
    run.outcome = outcomeNamed(outcome.toStdString());
    run.outcomeStep = step;
    run.message = "the reason";
    QCOMPARE(QString::fromStdString(outcomeText(run)), shortText);
    QCOMPARE(QString::fromStdString(outcomeText(run, true)), withMessage);
}

namespace {

// A finished run with steady throughput and a validation point, as the engine would store it.
int64_t storedRun(Store &store, const std::string &name, double tokensPerSecond, double loss)
{
    RunConfig config;
    config.name = name;
    config.memory.warmupSteps = 1;
    const int64_t id = store.createRun(name, toToml(config));
    std::vector<StepMetrics> steps(10);
    for (int64_t s = 0; s < 10; ++s) {
        steps[s].step = s;
        steps[s].tokens = (s + 1) * 1000;
        steps[s].tokensPerSecond = tokensPerSecond;
    }
    store.appendMetrics(id, steps);
    store.appendValidation(id, {{9, 10000, loss}});
    store.finishRun(id, Outcome::Completed, 9, "");
    return id;
}

} // namespace

void tst_Analysis::comparesTheNewestOfEachNameEachAgainstItsBaseline()
{
    QTemporaryDir dir;
    Store store(dir.filePath("study.sqlite").toStdString());
    storedRun(store, "naive", 1000, 3.0);
    storedRun(store, "chunked", 900, 3.0);
    const int64_t rerun = storedRun(store, "naive", 2000, 3.0); // replaces the first "naive"

    const StudyComparison all = compareStudy(store, {});
    QCOMPARE(all.groups.size(), size_t(2));
    QCOMPARE(all.groups[0].replicates.size(), size_t(1));
    QCOMPARE(all.groups[0].replicates[0].run.id, rerun);
    QCOMPARE(all.baseline, size_t(0));
    QCOMPARE(all.rows[1].speedup, 900.0 / 2000.0);

    ComparisonRequest request;
    request.runs = {"chunked", "naive"};
    request.baseline = "chunked";
    request.baselineOf = {{"naive", "chunked"}};
    const StudyComparison own = compareStudy(store, request);
    QCOMPARE(own.baseline, size_t(0));
    // Its own is the study's: no "vs".
    QVERIFY2(verdictText(own.rows[1]).rfind("vs chunked: ", 0) != 0, verdictText(own.rows[1]).c_str());
    request.baseline = "naive";
    request.baselineOf = {{"chunked", "chunked"}};
    const StudyComparison chunkedAlone = compareStudy(store, request);
    QCOMPARE(chunkedAlone.baseline, size_t(1));
    QCOMPARE(chunkedAlone.rows[0].speedup, 1.0);
    // A plan's own baseline is a baseline: its row says so, with no "vs" before it.
    QVERIFY(chunkedAlone.rows[0].ownBaseline);
    QCOMPARE(verdictText(chunkedAlone.rows[0]), std::string(kBaselineWord));
    QCOMPARE(decisionCells(chunkedAlone.rows[0]).action, std::string(kBaselineWord));
    QVERIFY(formatStudyComparison("s.sqlite", all).rfind("Study s.sqlite, baseline naive\n", 0) == 0);
    // The terminal's table says which baseline a run was judged against when it is not the study's.
    request.baselineOf = {{"naive", "chunked"}};
    const std::string text = formatStudyComparison("s.sqlite", compareStudy(store, request));
    const QStringList lines = QString::fromStdString(text).split(QLatin1Char('\n'));
    QVERIFY2(lines[3].startsWith(QStringLiteral("naive")) && lines[3].endsWith(QStringLiteral(" vs chunked")),
             text.c_str());
    QVERIFY2(QString::fromStdString(text).contains(QStringLiteral("\nnaive: vs chunked: ")), text.c_str());
}

void tst_Analysis::reportsShowHostileNamesAsText()
{
    QTemporaryDir dir;
    Store store(dir.filePath("hostile.sqlite").toStdString());
    storedRun(store, "fp32", 1000, 3.0);
    storedRun(store, "<img src=x onerror=alert(1)>", 1000, 3.0);
    storedRun(store, "=HYPERLINK(\"http://x\")", 1000, 3.0);
    const Report report = buildReport(store, {}, "fp32", 0.02);
    const std::string markdown = reportMarkdown(report, {});
    QVERIFY2(markdown.find("<img") == std::string::npos, markdown.c_str());
    QVERIFY(markdown.find("&lt;img src=x onerror=alert(1)&gt;") != std::string::npos);
    const std::string html = reportHtml(report, {});
    QVERIFY(html.find("<img src=x") == std::string::npos);
    const std::string csv = reportSummaryCsv(report);
    QVERIFY2(csv.find("\n\"'=HYPERLINK(\"\"http://x\"\")\",") != std::string::npos, csv.c_str());
}

void tst_Analysis::comparisonRefusesWhatIsNotInTheStudy()
{
    QTemporaryDir dir;
    Store store(dir.filePath("study.sqlite").toStdString());
    QVERIFY_EXCEPTION_THROWN(compareStudy(store, {}), StoreError); // no runs yet
    storedRun(store, "fp32", 1000, 3.0);
    ComparisonRequest missing;
    missing.runs = {"fp32", "bf16"};
    try {
        compareStudy(store, missing);
        QFAIL("a run that is not in the study was compared");
    } catch (const StoreError &e) {
        QVERIFY2(std::string(e.what()).find("no run or group 'bf16'") != std::string::npos, e.what());
    }
    ComparisonRequest foreignBaseline;
    foreignBaseline.baseline = "bf16";
    QVERIFY_EXCEPTION_THROWN(compareStudy(store, foreignBaseline), StoreError);
}

void tst_Analysis::runTextsReadAStudyWithAnEnvironmentThatIsNotJson()
{
    QTemporaryDir dir;
    Store store(dir.filePath("study.sqlite").toStdString());
    const int64_t id = storedRun(store, "fp32", 1000, 3.0);
    store.setEnvironment(id, "{not json");
    store.addEvent(id, EventKind::Warning, std::string(3000, 'w')); // longer than any fixed buffer
    const std::string list = formatRunList(store);
    QVERIFY2(list.find("fp32") != std::string::npos && list.find("completed") != std::string::npos, list.c_str());
    const std::string detail = formatRunDetail(store, *store.findRun("fp32"));
    QVERIFY2(detail.find("{not json") != std::string::npos, detail.c_str());
    QVERIFY(detail.find(std::string(3000, 'w')) != std::string::npos);
    QVERIFY(studyJson(store).find("{not json") != std::string::npos);
}

QTEST_APPLESS_MAIN(tst_Analysis)
#include "tst_analysis.moc"
