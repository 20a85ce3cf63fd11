// SPDX-License-Identifier: MIT
#include "ui/charts/comparisoncharts.h"

#include "ui/charts/bandchart.h"
#include "ui/charts/scatterchart.h"
#include "ui/charts/spreadchart.h"
#include "ui/charts/stackedbarchart.h"

#include <QObject>
#include <algorithm>
#include <cmath>
#include <iterator>

namespace optlog {

namespace {

// What hovering a memory segment says: the role, and the dtype of a state (the rest hold several).
QString segmentName(MemoryRole role, const std::vector<MemoryRow> &rows, MemorySource source)
{
    QString text = QString::fromLatin1(memoryRoleLabel(role));
    for (const auto &row : rows)
        if (row.role == role && row.source == source && !row.dtype.empty())
            return text + QStringLiteral(", ") + QString::fromStdString(row.dtype);
    return text;
}

} // namespace

ChartGroup chartGroup(const ComparisonRow &row, const GroupSummary &runs)
{
    const std::vector<RunSummary> &replicates = runs.replicates;
    ChartGroup group;
    group.name = QString::fromStdString(row.name);
    group.seeds = int(replicates.size());
    for (const auto &run : replicates) {
        const int64_t tokensPerStep = run.config ? run.config->tokensPerStep() : 0;
        const auto tokensAfter = [tokensPerStep](int64_t step) { return double((step + 1) * tokensPerStep); };
        QVector<QPointF> validation, underflow, vanishing;
        for (const auto &v : run.validation)
            validation.append({double(v.tokens), v.loss});
        for (const auto &n : run.numerics) {
            if (n.tensor != kAllParameters)
                continue;
            underflow.append({tokensAfter(n.step), 100 * n.fp16Underflow});
            if (!std::isnan(n.vanishingUpdates))
                vanishing.append({tokensAfter(n.step), 100 * n.vanishingUpdates});
        }
        group.validation << validation;
        if (!underflow.isEmpty())
            group.underflow << underflow;
        if (!vanishing.isEmpty())
            group.vanishing << vanishing;
        for (int64_t step : run.instabilitySteps)
            group.instabilityTokens << tokensAfter(step);
    }
    if (row.seeds > 1) {
        group.throughputLow = row.tokensPerSecond.min;
        group.throughputMedian = row.tokensPerSecond.median;
        group.throughputHigh = row.tokensPerSecond.max;
    } else {
        group.throughputLow = row.throughput.p10;
        group.throughputMedian = row.throughput.median;
        group.throughputHigh = row.throughput.p90;
    }
    group.finalValidationLoss = row.completed > 0 ? row.validationLoss : std::nan("");
    group.deltaLoss = row.completed > 0 ? row.deltaLoss : std::nan("");
    group.speedup = row.speedup;
    group.peakBytes = row.peakBytes;
    if (!replicates.empty()) {
        group.memory = runs.representative().memory;
        group.quantizations = runs.representative().quantizations;
    }
    return group;
}

ComparisonCharts::ComparisonCharts()
    : validation(new BandChart(QObject::tr("Validation loss"), QObject::tr("tokens seen"),
                               QObject::tr("nats per token"), AxisUnit::Plain))
    , throughput(new SpreadChart(QObject::tr("Steady-state throughput: median, whiskers min–max over seeds "
                                             "(one seed: p10–p90 of its steps)"),
                                 QObject::tr("tokens/s")))
    , memory(new StackedBarChart(QObject::tr("Peak memory by role: measured and predicted (hover a segment for its "
                                             "dtype)"),
                                 QObject::tr("bytes")))
    , speedVsQuality(new ScatterChart(QObject::tr("Quality against speed (marker area: peak memory)"),
                                      QObject::tr("speed-up over the baseline (×)"), AxisUnit::Plain,
                                      QObject::tr("Δ validation loss, nats per token"), AxisUnit::Plain))
    , memoryVsQuality(new ScatterChart(QObject::tr("Quality against memory"), QObject::tr("peak memory"),
                                       AxisUnit::Bytes, QObject::tr("final validation loss"), AxisUnit::Plain))
    , fp16Underflow(
          new BandChart(QObject::tr("Gradient elements FP16 would zero without a loss scaler (all parameters)"),
                        QObject::tr("tokens seen"), QObject::tr("gradient elements"), AxisUnit::Percent))
    , bf16Vanishing(new BandChart(QObject::tr("AdamW updates a BF16 weight would lose (all parameters)"),
                                  QObject::tr("tokens seen"), QObject::tr("updates"), AxisUnit::Percent))
    , quantization(new ScatterChart(QObject::tr("Post-training quantization: bits per weight against the loss it costs "
                                                "(optlog quantize)"),
                                    QObject::tr("bits per weight"), AxisUnit::Plain,
                                    QObject::tr("Δ validation loss, nats per token"), AxisUnit::Plain))
{
    speedVsQuality->setBestCorner(Qt::BottomRightCorner, QObject::tr("faster, lower loss"));
    memoryVsQuality->setBestCorner(Qt::BottomLeftCorner, QObject::tr("smaller, lower loss"));
    quantization->setBestCorner(Qt::BottomLeftCorner, QObject::tr("fewer bits, less loss"));
}

ComparisonCharts::~ComparisonCharts()
{
    for (QWidget *chart : charts())
        if (!chart->parent())
            delete chart;
}

QList<QWidget *> ComparisonCharts::charts() const
{
    return {validation,      throughput,    memory,        speedVsQuality,
            memoryVsQuality, fp16Underflow, bf16Vanishing, quantization};
}

QList<QWidget *> ComparisonCharts::filledCharts() const
{
    QList<QWidget *> out = charts();
    if (quantization->pointCount() == 0)
        out.removeAll(quantization);
    return out;
}

QString ComparisonCharts::title(const QWidget *chart) const
{
    return static_cast<const QChartView *>(chart)->chart()->title();
}

void ComparisonCharts::fill(const QList<ChartGroup> &groups)
{
    QList<BandGroupData> lines, underflow, vanishing;
    QList<SpreadData> spreads;
    QList<ScatterPoint> speed, peak;
    QStringList categories;
    QList<QVector<double>> roleValues(int(std::size(kPeakParts)));
    QList<QStringList> roleNames(int(std::size(kPeakParts)));
    for (const ChartGroup &run : groups) {
        lines << BandGroupData{run.name, run.validation, run.instabilityTokens};
        underflow << BandGroupData{run.name, run.underflow, {}};
        vanishing << BandGroupData{run.name, run.vanishing, {}};
        spreads << SpreadData{run.name, run.throughputLow, run.throughputMedian, run.throughputHigh};
        if (run.speedup > 0)
            speed << ScatterPoint{run.name, run.speedup, run.deltaLoss, double(run.peakBytes)};
        peak << ScatterPoint{run.name, double(run.peakBytes), run.finalValidationLoss};
        for (MemorySource source : {MemorySource::Measured, MemorySource::Predicted}) {
            categories << QStringLiteral("%1 · %2").arg(run.name, QLatin1String(memorySourceName(source)));
            for (size_t r = 0; r < std::size(kPeakParts); ++r) {
                double bytes = 0;
                for (const auto &row : run.memory)
                    if (row.role == kPeakParts[r] && row.source == source)
                        bytes = double(row.bytes);
                roleValues[int(r)].append(bytes);
                roleNames[int(r)].append(segmentName(kPeakParts[r], run.memory, source));
            }
        }
    }
    QStringList parts;
    for (MemoryRole role : kPeakParts)
        parts << QString::fromLatin1(memoryRoleLabel(role));
    validation->setGroups(lines);
    fp16Underflow->setGroups(underflow);
    bf16Vanishing->setGroups(vanishing);
    throughput->setData(spreads);
    memory->setData(categories, parts, roleValues, roleNames);
    memory->setMinimumHeight(std::max(300, int(categories.size()) * 28 + 120));
    speedVsQuality->setPoints(speed);
    memoryVsQuality->setPoints(peak);

    QList<ScatterPoint> schemes;
    // Schemes crowd a few bits per weight: their labels name the run only when several runs share the chart.
    const bool severalRuns = std::count_if(groups.begin(), groups.end(),
                                           [](const ChartGroup &run) { return !run.quantizations.empty(); })
                             > 1;
    for (const ChartGroup &run : groups) {
        if (run.quantizations.empty())
            continue;
        const auto label = [&](const std::string &what) {
            const QString text = QString::fromStdString(what);
            return severalRuns ? QStringLiteral("%1 · %2").arg(run.name, text) : text;
        };
        // The run's own weights beside its schemes: every weight in its floating-point dtype, no loss.
        const QuantizationResult &first = run.quantizations.front();
        const double ownBits = first.floatDtype == "float32" ? 32 : 16;
        schemes << ScatterPoint{label(first.floatDtype), ownBits, 0.0};
        for (const QuantizationResult &q : run.quantizations)
            schemes << ScatterPoint{label(q.scheme + (q.groupSize > 0 ? " g" + std::to_string(q.groupSize) : "")),
                                    q.bitsPerWeight(), q.lossDelta()};
    }
    quantization->setPoints(schemes);
    quantization->setVisible(!schemes.isEmpty());
}

} // namespace optlog
