// SPDX-License-Identifier: MIT
#pragma once

#include "core/analysis/comparison.h"
#include "core/store/store.h"

#include <QList>
#include <QPointF>
#include <QString>
#include <QVector>
#include <vector>

class QChartView;
class QWidget;

namespace optlog {

class BandChart;
class ScatterChart;
class SpreadChart;
class StackedBarChart;

// What the comparison charts need of one group (a run's replicates over seeds, or a run alone).
struct ChartGroup
{
    QString name;
    int seeds = 1;
    QList<QVector<QPointF>> validation; // per seed: validation loss against tokens seen
    QList<QVector<QPointF>> underflow;  // per seed: gradient elements FP16 would zero, %, against tokens
    QList<QVector<QPointF>> vanishing;  // per seed: AdamW updates BF16 weights would lose, %
    QVector<double> instabilityTokens;  // where a seed recorded an instability
    double throughputLow = 0, throughputMedian = 0, throughputHigh = 0; // tokens/s
    double finalValidationLoss = 0;                                     // mean over seeds; NaN when there is none
    double deltaLoss = 0;                          // against the baseline at matched tokens; NaN when there is none
    double speedup = 0;                            // median tokens/s over the baseline's; 0 unknown
    qint64 peakBytes = 0;                          // median over seeds
    std::vector<MemoryRow> memory;                 // the first seed's, predicted and measured, by role
    std::vector<QuantizationResult> quantizations; // of the first seed's final weights
};
// From a comparison's row and the group's runs: the whiskers of throughput are the min and max
// over seeds when there are several, else the p10 and p90 of the run's steps.
ChartGroup chartGroup(const ComparisonRow &row, const GroupSummary &runs);

// The charts of a comparison, the same in the Compare view and in reports: validation loss
// against tokens seen (mean over seeds with its band, instabilities marked), throughput with its
// spread, memory by role measured beside predicted, quality against speed and against memory,
// and what FP16 and BF16 would do to the gradients and updates. The charts have no parent until
// the caller puts them in a layout; those still without one are deleted with this object.
class ComparisonCharts
{
public:
    ComparisonCharts();
    ~ComparisonCharts();
    ComparisonCharts(const ComparisonCharts &) = delete;
    ComparisonCharts &operator=(const ComparisonCharts &) = delete;

    void fill(const QList<ChartGroup> &groups); // the first group is the baseline
    // As widgets, in reading order: what a view or a report places needs no Qt Charts class.
    QList<QWidget *> charts() const;
    // The charts with something to show after fill(): the quantization chart only when a run has
    // been quantized (fill() hides it otherwise).
    QList<QWidget *> filledCharts() const;
    QString title(const QWidget *chart) const;

    BandChart *validation;
    SpreadChart *throughput;
    StackedBarChart *memory;
    ScatterChart *speedVsQuality;
    ScatterChart *memoryVsQuality;
    BandChart *fp16Underflow;
    BandChart *bf16Vanishing;
    ScatterChart *quantization; // bits per weight against Δ loss: a point per scheme, the run's own beside
};

} // namespace optlog
