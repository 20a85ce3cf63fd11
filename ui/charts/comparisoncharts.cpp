// SPDX-License-Identifier: MIT
#include "ui/charts/comparisoncharts.h"

#include "ui/charts/linechart.h"
#include "ui/charts/scatterchart.h"
#include "ui/charts/spreadchart.h"
#include "ui/charts/stackedbarchart.h"

#include <QObject>

#include <iterator>

namespace optlog {

namespace {
constexpr double kMiB = 1024.0 * 1024.0;
} // namespace

ComparisonCharts::ComparisonCharts()
    : validation(new LineChart(QObject::tr("Validation loss"), QObject::tr("tokens seen"), QObject::tr("nats per token")))
    , throughput(new SpreadChart(QObject::tr("Steady-state throughput (p10, median, p90)"), QObject::tr("tokens/s")))
    , memory(new StackedBarChart(QObject::tr("Peak memory by role: measured and predicted"), QObject::tr("MiB")))
    , speedVsQuality(new ScatterChart(QObject::tr("Quality against speed"), QObject::tr("tokens/s"),
                                      QObject::tr("final validation loss")))
    , memoryVsQuality(new ScatterChart(QObject::tr("Quality against memory"), QObject::tr("peak MiB"),
                                       QObject::tr("final validation loss")))
{
}

ComparisonCharts::~ComparisonCharts()
{
    for (QChartView *chart : charts())
        if (!chart->parent())
            delete chart;
}

QList<QChartView *> ComparisonCharts::charts() const
{
    return {validation, throughput, memory, speedVsQuality, memoryVsQuality};
}

QString ComparisonCharts::title(QChartView *chart) const
{
    return chart->chart()->title();
}

void ComparisonCharts::fill(const QList<ChartRun> &runs)
{
    QList<LineSeriesData> lines;
    QList<SpreadData> spreads;
    QList<ScatterPoint> speed, peak;
    QStringList categories;
    QList<QVector<double>> roleValues(int(std::size(kPeakParts)));
    for (const ChartRun &run : runs) {
        LineSeriesData line{run.name, {}};
        for (const auto &v : run.validation)
            line.points.append({double(v.tokens), v.loss});
        lines << line;
        spreads << SpreadData{run.name, run.throughput.p10, run.throughput.median, run.throughput.p90};
        speed << ScatterPoint{run.name, run.throughput.median, run.finalValidationLoss};
        peak << ScatterPoint{run.name, double(run.peakBytes) / kMiB, run.finalValidationLoss};
        for (MemorySource source : {MemorySource::Measured, MemorySource::Predicted}) {
            categories << QStringLiteral("%1 · %2").arg(run.name, QLatin1String(memorySourceName(source)));
            for (size_t r = 0; r < std::size(kPeakParts); ++r) {
                double bytes = 0;
                for (const auto &row : run.memory)
                    if (row.role == kPeakParts[r] && row.source == source)
                        bytes = double(row.bytes);
                roleValues[int(r)].append(bytes / kMiB);
            }
        }
    }
    QStringList parts;
    for (MemoryRole role : kPeakParts)
        parts << QString::fromLatin1(memoryRoleLabel(role));
    validation->setSeries(lines);
    throughput->setData(spreads);
    memory->setData(categories, parts, roleValues);
    memory->setMinimumHeight(std::max(300, int(categories.size()) * 28 + 120));
    speedVsQuality->setPoints(speed);
    memoryVsQuality->setPoints(peak);
}

} // namespace optlog
