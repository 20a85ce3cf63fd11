// SPDX-License-Identifier: MIT
// The compare view on a study with known numbers: matched-token deltas, verdicts, config diff.
#include "core/analysis/comparison.h"
#include "core/analysis/decisionwords.h"
#include "core/analysis/report.h"
#include "core/analysis/studycomparison.h"
#include "core/analysis/verdictcells.h"
#include "core/config/config.h"
#include "core/config/recordedconfig.h"
#include "core/store/store.h"
#include "core/store/weights.h"
#include "tests/common/steadysteps.h"
#include "ui/charts/bandchart.h"
#include "ui/charts/charttheme.h"
#include "ui/charts/comparisoncharts.h"
#include "ui/charts/linechart.h"
#include "ui/charts/scatterchart.h"
#include "ui/charts/spreadchart.h"
#include "ui/charts/stackedbarchart.h"
#include "ui/compareview.h"
#include "ui/decisionsummary.h"
#include "ui/numericstable.h"

#include <QBoxPlotSeries>
#include <QBoxSet>
#include <QCategoryAxis>
#include <QChart>
#include <QCheckBox>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

using namespace optlog;

namespace {

struct KnownRun
{
    std::string name;
    std::string mode;
    std::vector<std::pair<int64_t, double>> validation; // (tokens, loss)
    double tokensPerSecond;
    int64_t peakBytes;
    std::string group = "";           // replicates share one
    std::vector<int64_t> spikes = {}; // steps with a recorded loss spike
};

int64_t addRun(Store &store, const KnownRun &known)
{
    RunConfig config;
    config.name = known.name;
    config.precision.mode = known.mode;
    config.train.steps = 20;
    config.group = known.group;
    const int64_t id = store.createRun(known.name, toToml(config), known.group);
    for (int64_t step : known.spikes)
        store.addEvent(id, EventKind::LossSpike, "a loss spike", step);
    store.appendMetrics(id, testing::steadySteps(20, 1000, known.tokensPerSecond));
    std::vector<ValidationPoint> points;
    for (const auto &[tokens, loss] : known.validation)
        points.push_back({tokens / 1000 - 1, tokens, loss});
    store.appendValidation(id, points);
    store.replaceMemory(id, {{MemoryRole::Parameters, "float32", known.peakBytes / 4, MemorySource::Measured},
                             {MemoryRole::Peak, "mixed", known.peakBytes, MemorySource::Measured},
                             {MemoryRole::Parameters, "float32", known.peakBytes / 4, MemorySource::Predicted}});
    store.finishRun(id, Outcome::Completed, 19, "");
    return id;
}

} // namespace

class tst_CompareView : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_path = m_dir.filePath(QStringLiteral("known.sqlite")).toStdString();
        Store store(m_path);
        // The baseline is validated to 20,000 tokens; "short" only to 10,000: they are compared at
        // 10,000, where the baseline's loss is interpolated to 2.25.
        m_baseline = addRun(store, {"fp32", "fp32", {{5000, 2.5}, {15000, 2.0}, {20000, 1.8}}, 5000, 400 << 20});
        m_same = addRun(store, {"bf16", "autocast-bf16", {{5000, 2.5}, {10000, 2.26}, {20000, 1.81}}, 6000, 300 << 20});
        m_worse = addRun(store, {"short", "pure-bf16", {{5000, 2.6}, {10000, 2.4}}, 10000, 200 << 20});
    }

    void matchedTokenDeltasAndVerdicts()
    {
        CompareView view;
        view.setStudy(loadStudySnapshot(m_path, {}));
        view.setTolerance(0.02);
        view.setSelectedRuns({m_baseline, m_same, m_worse});
        view.setBaseline(m_baseline);
        const auto &rows = view.rows();
        QCOMPARE(int(rows.size()), 3);
        QCOMPARE(rows[0].name, std::string("fp32"));

        QCOMPARE(rows[1].matchedTokens, int64_t(20000));
        QVERIFY(qAbs(rows[1].deltaLoss - 0.01) < 1e-9);
        QVERIFY(qAbs(rows[1].speedup - 1.2) < 1e-9);
        QVERIFY(qAbs(rows[1].memorySaved - 0.25) < 1e-9);

        QCOMPARE(rows[2].matchedTokens, int64_t(10000));
        QVERIFY(qAbs(rows[2].deltaLoss - 0.15) < 1e-9); // 2.4 against the baseline's 2.25
        QVERIFY(qAbs(rows[2].speedup - 2.0) < 1e-9);

        // The words: within tolerance is "same quality", past it is a quality loss.
        QTableWidget *table = view.verdictTable();
        QCOMPARE(table->rowCount(), 3);
        QCOMPARE(table->item(0, 0)->text(), QStringLiteral("fp32 (baseline)"));
        QCOMPARE(table->item(1, 1)->text(), QStringLiteral("1")); // seeds
        // One seed a side: the tolerance stands in for the unknown seed noise.
        QCOMPARE(table->item(1, 4)->text(), QStringLiteral("+0.0100 (tolerance ±0.02)"));
        QCOMPARE(table->item(2, 4)->text(), QStringLiteral("+0.1500 (tolerance ±0.02)"));
        QCOMPARE(table->item(2, 3)->text(), QStringLiteral("2.4000 @ 10000 tokens"));
        QCOMPARE(table->item(1, 5)->text(), QStringLiteral("1.20x"));
        QCOMPARE(table->item(1, 9)->text(), QString::fromStdString(verdictText(rows[1])));
        QVERIFY2(table->item(1, 9)->text().contains(QStringLiteral("same quality")),
                 qPrintable(table->item(1, 9)->text()));
        QVERIFY2(table->item(2, 9)->text().contains(QStringLiteral("worse")), qPrintable(table->item(2, 9)->text()));
        // The report's verdict table and `optlog compare --wide` say the same, cell for cell: all
        // three only place the cells verdictCells writes.
        const Store store(m_path, Store::Access::ReadOnly);
        const Report report = buildReport(store, {}, "fp32", 0.02);
        const std::string markdown = reportMarkdown(report, {});
        ComparisonRequest request;
        request.baseline = "fp32";
        const QStringList wide = QString::fromStdString(
                                     formatStudyComparison(m_path, compareStudy(store, request), /*wide=*/true))
                                     .split(QLatin1Char('\n'));
        QCOMPARE(int(report.groups.size()), table->rowCount());
        for (int row = 0; row < table->rowCount(); ++row) {
            const VerdictCells cells = verdictCells(report.groups[size_t(row)], 0.02);
            QString markdownRow = QStringLiteral("|");
            const QString wideLine = wide.value(row + 2); // after the study line and the column titles
            qsizetype wideAt = 0;
            for (int column = 0; column < table->columnCount(); ++column) {
                const QString text = QString::fromStdString(cells[VerdictColumn(column)]);
                QCOMPARE(table->item(row, column)->text(), text);
                markdownRow += QStringLiteral(" %1 |").arg(text);
                // --wide: each cell in its column's order, two spaces at least from the one before.
                wideAt = wideLine.indexOf(text, wideAt);
                QVERIFY2(wideAt >= 0, qPrintable(text + QStringLiteral(" in: ") + wideLine));
                wideAt += text.size();
            }
            QVERIFY2(QString::fromStdString(markdown).contains(markdownRow), qPrintable(markdownRow));
        }
    }

    void anotherBaselineJudgesAgainstIt()
    {
        CompareView view;
        view.setStudy(loadStudySnapshot(m_path, {}));
        view.setSelectedRuns({m_baseline, m_worse});
        view.setBaseline(m_worse);
        QCOMPARE(view.rows().front().name, std::string("short"));
        QVERIFY(qAbs(view.rows()[1].deltaLoss + 0.15) < 1e-9);
        QVERIFY(qAbs(view.rows()[1].speedup - 0.5) < 1e-9);
    }

    void configDiffCanShowOnlyDifferences()
    {
        CompareView view;
        view.setStudy(loadStudySnapshot(m_path, {}));
        view.setSelectedRuns({m_baseline, m_same});
        QTableWidget *config = view.configTable();
        QCOMPARE(config->columnCount(), 3);
        auto *onlyDifferences = view.findChild<QCheckBox *>();
        QVERIFY(onlyDifferences->isChecked()); // the default: what differs is the question
        QCOMPARE(config->rowCount(), 1);
        QCOMPARE(config->item(0, 0)->text(), QStringLiteral("precision.mode"));
        QCOMPARE(config->item(0, 2)->text(), QStringLiteral("autocast-bf16"));
        onlyDifferences->setChecked(false);
        QVERIFY(config->rowCount() > 20); // every field but the name
    }

    void memoryByRoleShowsDtypeAndPrediction()
    {
        CompareView view;
        view.setStudy(loadStudySnapshot(m_path, {}));
        view.setSelectedRuns({m_baseline, m_worse});
        view.setBaseline(m_baseline);
        QTableWidget *memory = view.memoryTable();
        QCOMPARE(memory->columnCount(), 3); // the role, then the baseline and the other run
        QCOMPARE(memory->horizontalHeaderItem(1)->text(), QStringLiteral("fp32"));
        QCOMPARE(memory->horizontalHeaderItem(2)->text(), QStringLiteral("short"));
        // The roles the runs stored, in the usual order: parameters (with its prediction), then the peak.
        QCOMPARE(memory->rowCount(), 2);
        QCOMPARE(memory->item(0, 0)->text(), QStringLiteral("parameters"));
        QCOMPARE(memory->item(0, 1)->text(), QStringLiteral("100.0 MiB · fp32\npredicted 100.0 MiB (+0.0%)"));
        QCOMPARE(memory->item(0, 2)->text(), QStringLiteral("50.0 MiB · fp32\npredicted 50.0 MiB (+0.0%)"));
        QCOMPARE(memory->item(1, 0)->text(), QStringLiteral("peak"));
        QCOMPARE(memory->item(1, 1)->text(), QStringLiteral("400.0 MiB")); // a sum of states: no dtype
        QCOMPARE(memory->item(1, 2)->text(), QStringLiteral("200.0 MiB"));
    }

    // A run its own trainer recorded (`optlog record`) is compared as any run; where a figure needs
    // what only the engine knows (MFU, the memory model's prediction) the table says so, and the
    // config diff sets its trainer's keys beside the engine's fields.
    void recordedRunsSayWhatOnlyTheEngineKnows()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("recorded.sqlite")).toStdString();
        int64_t engine = 0, recorded = 0;
        {
            Store store(path);
            engine = addRun(store, {"fp32", "fp32", {{5000, 2.5}, {20000, 1.8}}, 5000, 400 << 20});
            recorded = store.createRun("mine", recordedConfigToml(R"({"amp":"bf16","lr":0.001})"));
            store.setEnvironment(recorded, R"({"recorder":"optlog Python module 1, train.py"})");
            store.appendMetrics(recorded, testing::steadySteps(20, 1000, 10000));
            store.appendValidation(recorded, {{4, 5000, 2.5}, {19, 20000, 1.8}});
            store.replaceMemory(recorded, {{MemoryRole::Parameters, "float32", 100 << 20, MemorySource::Measured},
                                           {MemoryRole::Peak, "mixed", 300 << 20, MemorySource::Measured}});
            store.finishRun(recorded, Outcome::Completed, 19, "");
        }
        CompareView view;
        view.setStudy(loadStudySnapshot(path, {}));
        view.setSelectedRuns({engine, recorded});
        view.setBaseline(engine);
        QCOMPARE(int(view.rows().size()), 2);
        QVERIFY(qAbs(view.rows()[1].speedup - 2.0) < 1e-9);
        const QTableWidgetItem *mfu = view.verdictTable()->item(1, int(VerdictColumn::Mfu));
        QCOMPARE(mfu->text(), QStringLiteral("-"));
        QVERIFY2(mfu->toolTip().contains(QStringLiteral("optlog Python module 1, train.py")),
                 qPrintable(mfu->toolTip()));
        QCOMPARE(view.memoryTable()->item(0, 2)->text(),
                 QStringLiteral("100.0 MiB · fp32\nnot predicted: recorded run"));
        QStringList amp;
        QTableWidget *config = view.configTable();
        for (int row = 0; row < config->rowCount(); ++row)
            if (config->item(row, 0)->text() == QStringLiteral("amp"))
                amp << config->item(row, 1)->text() << config->item(row, 2)->text();
        QCOMPARE(amp, (QStringList{QStringLiteral("-"), QStringLiteral("bf16")}));
    }

    void quantizationsAreAPointPerSchemeBesideTheRunsOwn()
    {
        const std::string path = m_dir.filePath(QStringLiteral("quantized.sqlite")).toStdString();
        int64_t quantized = 0, plain = 0;
        const auto quantization = [](const std::string &scheme, int64_t group, double loss) {
            QuantizationResult q;
            q.scheme = scheme;
            q.groupSize = group;
            q.quantizedWeights = 3000;
            q.totalWeights = 4000;
            q.codeBytes = 1500;
            q.scaleBytes = 2 * 3000 / (group > 0 ? group : 100); // int8: one scale per row of 100
            q.floatBytes = 1000 * 4;
            q.floatDtype = "float32";
            q.baseLoss = 1.8;
            q.loss = loss;
            return q;
        };
        {
            Store store(path);
            quantized = addRun(store, {"fp32", "fp32", {{5000, 2.5}, {20000, 1.8}}, 5000, 400 << 20});
            plain = addRun(store, {"bf16", "autocast-bf16", {{5000, 2.5}, {20000, 1.81}}, 6000, 300 << 20});
            storeQuantization(store, quantized, quantization("int4", 64, 1.83));
            storeQuantization(store, quantized, quantization("nf4", 64, 1.82));
        }
        CompareView view;
        StudySnapshot first = loadStudySnapshot(path, {});
        view.setStudy(first);
        view.setSelectedRuns({quantized, plain});
        view.setBaseline(quantized);
        const ScatterChart *chart = view.charts().quantization;
        QCOMPARE(chart->pointCount(), 3); // the run's own FP32 weights, int4 and nf4; bf16 has none
        QVERIFY(!chart->isHidden());
        QVERIFY(view.charts().filledCharts().contains(view.charts().quantization));

        // A finished run quantized again is read again, not served from the cache.
        {
            Store store(path);
            storeQuantization(store, quantized, quantization("int8", 0, 1.8));
        }
        std::map<int64_t, RunSnapshotPtr> cache;
        for (const auto &run : first.runs)
            cache[run->run().id] = run;
        view.setStudy(loadStudySnapshot(path, cache));
        QCOMPARE(view.charts().quantization->pointCount(), 4);

        view.setStudy(loadStudySnapshot(m_path, {})); // no run quantized: no chart
        view.setSelectedRuns({m_baseline, m_same});
        QVERIFY(view.charts().quantization->isHidden());
        QVERIFY(!view.charts().filledCharts().contains(view.charts().quantization));
    }

    // The decision first: a line per group with its action in plain words; the numerics as a
    // table coloured by risk, the worst tensor on hover; memory segments say their role and dtype.
    void theDecisionSummaryLeadsAndTheNumericsAreATable()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("numerics.sqlite")).toStdString();
        int64_t base = 0, fp16 = 0;
        {
            Store store(path);
            base = addRun(store, {"fp32", "fp32", {{5000, 2.5}, {20000, 1.8}}, 5000, 400 << 20});
            fp16 = addRun(store, {"fp16", "autocast-fp16", {{5000, 2.5}, {20000, 1.805}}, 7000, 300 << 20});
            store.appendNumerics(fp16,
                                 {{19, kAllParameters, 0.02, 0.03, 0.0, 1024, kNotApplicable, kNotApplicable},
                                  {19, "blocks.0.mlp.fc.bias", 0.4, 0.5, 0.0, 1024, kNotApplicable, kNotApplicable},
                                  {19, "blocks.0", kNotApplicable, kNotApplicable, kNotApplicable, kNotApplicable,
                                   kNotApplicable, 40000}});
        }
        CompareView view;
        view.setStudy(loadStudySnapshot(path, {}));
        view.setSelectedRuns({base, fp16});
        view.setBaseline(base);
        DecisionSummary *summary = view.decisionSummary();
        QCOMPARE(summary->rowCount(), 2);
        QCOMPARE(summary->item(0, DecisionSummary::Action)->text(), QStringLiteral("baseline"));
        QCOMPARE(summary->item(1, DecisionSummary::Technique)->text(), QStringLiteral("fp16"));
        QCOMPARE(summary->item(1, DecisionSummary::Action)->text(), QStringLiteral("take it"));
        QCOMPARE(summary->item(1, DecisionSummary::Speed)->text(), QStringLiteral("1.40x"));
        QVERIFY2(summary->item(1, DecisionSummary::Memory)->text().endsWith(QStringLiteral(", saves 25%")),
                 qPrintable(summary->item(1, DecisionSummary::Memory)->text()));
        QVERIFY2(summary->item(1, DecisionSummary::Quality)->text().startsWith(QStringLiteral("same: +0.0050")),
                 qPrintable(summary->item(1, DecisionSummary::Quality)->text()));
        QVERIFY(summary->item(1, DecisionSummary::Quality)->toolTip().contains(QStringLiteral("1.40x faster")));

        NumericsTable *numerics = view.numericsTable();
        QCOMPARE(numerics->rowCount(), 1);
        QCOMPARE(numerics->runOfRow(0), QStringLiteral("fp16"));
        QCOMPARE(numerics->item(0, 1)->text(), QStringLiteral("2.0%"));
        QCOMPARE(numerics->item(0, 1)->background().color(), riskColor(RiskLevel::Trouble));
        QCOMPARE(numerics->item(0, 1)->toolTip(),
                 QStringLiteral("worst tensor: blocks.0.mlp.fc.bias (40% without a scaler)"));
        QCOMPARE(numerics->item(0, 2)->background().color(), riskColor(RiskLevel::Fine));
        QCOMPARE(numerics->item(0, 3)->text(), QStringLiteral("–")); // no BF16 weights to lose updates
        QCOMPARE(numerics->item(0, 4)->background().color(), riskColor(RiskLevel::Trouble)); // 40000 of 65504
        QCOMPARE(numerics->item(0, 4)->toolTip(), QStringLiteral("worst tensor: blocks.0"));

        const StackedBarChart *memory = view.charts().memory;
        QCOMPARE(memory->categoryCount(), 4); // measured and predicted, per group
        QCOMPARE(memory->segmentText(0, 0), QStringLiteral("fp32 · measured: parameters, float32 — 100.0 MiB"));
    }

    // Ticks at round values with the unit written once per label: k and M for tokens, IEC for
    // bytes, and a share that never goes below zero.
    void chartsTickAtRoundValues()
    {
        const AxisTicks tokens = roundTicks(1024, 58368, AxisUnit::Count);
        QCOMPARE(tokens.step, 10000.0);
        QCOMPARE(tokens.values, (QVector<double>{10000, 20000, 30000, 40000, 50000}));
        QCOMPARE(tickLabel(20000, tokens.step, AxisUnit::Count), QStringLiteral("20k"));
        QCOMPARE(tickLabel(1500000, 500000, AxisUnit::Count), QStringLiteral("1.5M"));
        QCOMPARE(tickLabel(500, 100, AxisUnit::Count), QStringLiteral("500"));
        const AxisTicks bytes = roundTicks(0, 300.0 * (1 << 20), AxisUnit::Bytes);
        QCOMPARE(bytes.step, 100.0 * (1 << 20));
        QCOMPARE(tickLabel(bytes.values.last(), bytes.step, AxisUnit::Bytes), QStringLiteral("300 MiB"));
        QCOMPARE(tickLabel(0, bytes.step, AxisUnit::Bytes), QStringLiteral("0 MiB"));
        QCOMPARE(tickLabel(1.5 * (1 << 30), 0.5 * (1 << 30), AxisUnit::Bytes), QStringLiteral("1.5 GiB"));
        QCOMPARE(tickLabel(2.35, 0.05, AxisUnit::Plain), QStringLiteral("2.35"));
        QCOMPARE(roundTicks(2.31, 2.52, AxisUnit::Plain).step, 0.05);

        // A share whose data sits near zero: the axis starts at zero, not at -10%.
        BandChart chart(QStringLiteral("underflow"), QStringLiteral("tokens seen"), QStringLiteral("elements"),
                        AxisUnit::Percent);
        chart.setGroups({{QStringLiteral("fp16"), {{{1024, 0.0}, {29696, 38.0}, {58368, 0.5}}}, {}}});
        auto *y = qobject_cast<QCategoryAxis *>(chart.chart()->axes(Qt::Vertical).first());
        auto *x = qobject_cast<QCategoryAxis *>(chart.chart()->axes(Qt::Horizontal).first());
        QVERIFY(x && y);
        QCOMPARE(y->min(), 0.0);
        QCOMPARE(y->categoriesLabels().first(), QStringLiteral("0%"));
        QCOMPARE(x->categoriesLabels(), (QStringList{"10k", "20k", "30k", "40k", "50k"}));
        QCOMPARE(x->max(), 58368.0); // tokens seen reach the right edge
    }

    void fewerThanTwoRunsShowsTheEmptyState()
    {
        CompareView view;
        view.setStudy(loadStudySnapshot(m_path, {}));
        view.setSelectedRuns({m_baseline});
        QVERIFY(view.rows().empty());
    }

    void scatterLabelsDoNotOverlap()
    {
        // Five runs on one loss, two of them on one spot, as checkpointing and its twin would be;
        // "lost" has no validation loss and no place.
        ScatterChart chart(QStringLiteral("speed"), QStringLiteral("tokens/s"), AxisUnit::Count, QStringLiteral("loss"),
                           AxisUnit::Plain);
        chart.resize(800, 600);
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        chart.setPoints({{QStringLiteral("checkpoint-every-block"), 4100, 2.40},
                         {QStringLiteral("twin"), 4110, 2.40},
                         {QStringLiteral("microbatch4-accum2"), 4900, 2.40},
                         {QStringLiteral("fp32"), 5100, 2.40},
                         {QStringLiteral("autocast-bf16"), 12000, 2.40},
                         {QStringLiteral("better"), 4100, 2.00},
                         {QStringLiteral("lost"), 9000, NAN}});
        QCOMPARE(chart.pointCount(), 6);
        const auto check = [&chart] {
            const auto labels = chart.labels();
            QCOMPARE(labels.size(), 6); // every drawn run keeps its own name
            const double line = labels.front().rect.height();
            for (int i = 0; i < labels.size(); ++i) {
                for (int j = 0; j < i; ++j)
                    QVERIFY2(!labels[i].rect.intersects(labels[j].rect),
                             qPrintable(labels[i].text + " overlaps " + labels[j].text));
                // Near its point: at most a few lines away, and over it unless held inside the plot.
                QVERIFY2(std::abs(labels[i].rect.center().y() - labels[i].point.y()) < 6 * line,
                         qPrintable(labels[i].text));
            }
        };
        check();
        chart.resize(1400, 500); // placed again for the new size
        check();
    }

    void replicatesAreComparedAsGroupsWithBands()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("seeds.sqlite")).toStdString();
        QList<qint64> ids;
        {
            Store store(path);
            // Three seeds a side, seed noise sd 0.004: the bf16 group is the same quality.
            const double fp32[] = {2.500, 2.504, 2.496}, bf16[] = {2.503, 2.507, 2.499};
            for (int s = 0; s < 3; ++s)
                ids << addRun(store, {"fp32 seed " + std::to_string(s + 1),
                                      "fp32",
                                      {{10000, fp32[s] + 0.5}, {20000, fp32[s]}},
                                      5000.0 + 100 * s,
                                      400 << 20,
                                      "fp32"});
            for (int s = 0; s < 3; ++s)
                ids << addRun(store, {"bf16 seed " + std::to_string(s + 1),
                                      "autocast-bf16",
                                      {{10000, bf16[s] + 0.5}, {20000, bf16[s]}},
                                      10000.0 + 100 * s,
                                      300 << 20,
                                      "bf16",
                                      s == 1 ? std::vector<int64_t>{14} : std::vector<int64_t>{}});
        }
        CompareView view;
        view.setStudy(loadStudySnapshot(path, {}));
        view.setSelectedRuns(ids);
        view.setBaseline(ids.first());
        QCOMPARE(int(view.rows().size()), 2);
        QTableWidget *table = view.verdictTable();
        QCOMPARE(table->item(0, 0)->text(), QStringLiteral("fp32 (baseline)"));
        QCOMPARE(table->item(1, 0)->text(), QStringLiteral("bf16"));
        QCOMPARE(table->item(1, 1)->text(), QStringLiteral("3"));
        QCOMPARE(table->item(1, 4)->text(), QStringLiteral("+0.0030 ± 0.0091 (Welch 95%)"));
        QCOMPARE(table->item(1, 6)->text(), QStringLiteral("10100 (10000-10200 over seeds)"));
        QVERIFY2(table->item(1, 9)->text().startsWith(
                     QStringLiteral("same quality (Δ +0.003 ± 0.009 nats, 3 vs 3 seeds)")),
                 qPrintable(table->item(1, 9)->text()));
        QVERIFY2(table->item(1, 9)->text().endsWith(QStringLiteral("unstable: 1 loss spike")),
                 qPrintable(table->item(1, 9)->text()));
        // The validation chart: each group's mean over its band, its seed count in the legend,
        // and the spike marked.
        const auto *chart = view.findChild<BandChart *>();
        QVERIFY(chart);
        QCOMPARE(chart->legendNames(), (QStringList{QStringLiteral("fp32 · mean of 3 seeds, band min–max"),
                                                    QStringLiteral("bf16 · mean of 3 seeds, band min–max"),
                                                    QStringLiteral("bf16 · instabilities")}));
    }

    void aBandIsTheMeanBetweenTheLowestAndHighestSeed()
    {
        const QList<QVector<QPointF>> seeds = {{{0, 3.0}, {10, 2.0}, {20, 1.0}},
                                               {{0, 5.0}, {5, 3.0}, {20, 2.0}}, // different x: interpolated at 10
                                               {{0, 4.0}, {10, 3.0}}};          // ends early: 20 is left out
        const Band band = BandChart::band(seeds);
        QCOMPARE(band.mean, (QVector<QPointF>{{0, 4.0}, {10, (2.0 + (3.0 - 1.0 / 3) + 3.0) / 3}}));
        QCOMPARE(band.low, (QVector<QPointF>{{0, 3.0}, {10, 2.0}}));
        QCOMPARE(band.high, (QVector<QPointF>{{0, 5.0}, {10, 3.0}}));
    }

    void longSeriesAreDownsampledForDisplayKeepingSpikes()
    {
        QVector<QPointF> points;
        for (int i = 0; i < 10000; ++i)
            points.append({double(i), i == 7777 ? 50.0 : 2.0});
        const QVector<QPointF> shown = LineChart::downsample(points, 2000);
        QVERIFY(shown.size() <= 2000);
        QCOMPARE(shown.front(), points.front());
        QCOMPARE(shown.back(), points.back());
        QVERIFY(std::any_of(shown.begin(), shown.end(), [](const QPointF &p) { return p.y() == 50.0; }));
        QVERIFY(std::is_sorted(shown.begin(), shown.end(),
                               [](const QPointF &a, const QPointF &b) { return a.x() < b.x(); }));
        QCOMPARE(LineChart::downsample(points.mid(0, 100), 2000).size(), 100);
    }

    // The throughput chart's axis holds every run drawn, the fastest too: a chart once ended near
    // 6k tokens/s, and three runs at 8k to 11.5k drew no box at all.
    void everyBoxLiesInsideThePlotArea()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("speeds.sqlite")).toStdString();
        QList<qint64> ids;
        {
            Store store(path);
            for (int i = 1; i <= 12; ++i)
                ids.push_back(
                    addRun(store,
                           {"r" + std::to_string(i), "fp32", {{5000, 2.5}, {20000, 1.8}}, 1000.0 * i, 100 << 20}));
        }
        CompareView view;
        view.resize(1280, 800);
        view.setStudy(loadStudySnapshot(path, {}));
        view.setSelectedRuns(ids.mid(0, 6)); // then the faster ones join: the axis must grow
        view.setBaseline(ids.front());
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setSelectedRuns(ids);
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        SpreadChart *chart = view.charts().throughput;
        chart->resize(900, 420); // laid out, whether or not its tab is the one shown
        QCoreApplication::processEvents();
        QChart *c = chart->chart();
        QCOMPARE(chart->boxCount(), 12);
        auto *series = static_cast<QBoxPlotSeries *>(c->series().first());
        const QRectF area = c->plotArea().adjusted(-1, -1, 1, 1);
        for (int i = 0; i < series->count(); ++i) {
            const QBoxSet *box = series->boxSets().at(i);
            for (const double value : {box->at(QBoxSet::LowerExtreme), box->at(QBoxSet::UpperExtreme)}) {
                const QPointF point = c->mapToPosition(QPointF(i, value), series);
                QVERIFY2(area.contains(point), qPrintable(QStringLiteral("%1 at %2 tokens/s: (%3, %4) outside %5x%6")
                                                              .arg(box->label())
                                                              .arg(value)
                                                              .arg(point.x())
                                                              .arg(point.y())
                                                              .arg(area.width())
                                                              .arg(area.height())));
            }
        }
    }

private:
    QTemporaryDir m_dir;
    std::string m_path;
    qint64 m_baseline = 0, m_same = 0, m_worse = 0;
};

QTEST_MAIN(tst_CompareView)
#include "tst_compareview.moc"
