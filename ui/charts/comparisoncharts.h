// SPDX-License-Identifier: MIT
#pragma once

#include "core/analysis/analysis.h"
#include "core/store/store.h"

#include <QList>
#include <QString>

#include <vector>

class QChartView;

namespace optlog {

class LineChart;
class ScatterChart;
class SpreadChart;
class StackedBarChart;

// What the comparison charts need of one run.
struct ChartRun
{
    QString name;
    std::vector<ValidationPoint> validation;
    ThroughputSummary throughput;
    double finalValidationLoss = 0; // NaN when the run has no validation
    qint64 peakBytes = 0;
    std::vector<MemoryRow> memory;  // predicted and measured, by role
};

// The charts of a comparison, the same in the Compare view and in reports: validation loss
// against tokens seen, throughput with its spread, memory by role measured beside predicted,
// and quality against speed and against memory. The charts have no parent until the caller
// puts them in a layout; those still without one are deleted with this object.
class ComparisonCharts
{
public:
    ComparisonCharts();
    ~ComparisonCharts();
    ComparisonCharts(const ComparisonCharts &) = delete;
    ComparisonCharts &operator=(const ComparisonCharts &) = delete;

    void fill(const QList<ChartRun> &runs); // the first run is the baseline
    QList<QChartView *> charts() const;     // in reading order
    QString title(QChartView *chart) const;

    LineChart *validation;
    SpreadChart *throughput;
    StackedBarChart *memory;
    ScatterChart *speedVsQuality;
    ScatterChart *memoryVsQuality;
};

} // namespace optlog
