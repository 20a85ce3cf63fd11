// SPDX-License-Identifier: MIT
#pragma once

#include "core/analysis/comparison.h"

#include <QColor>
#include <QPointF>
#include <QString>
#include <QVector>
#include <cmath>

class QCategoryAxis;
class QChart;
class QChartView;
class QPalette;

namespace optlog {

// The same run keeps the same colour in every chart of a view: colours follow the order in
// which the runs are handed to the charts.
QColor runColor(int index);
// Whether a palette is a dark one (light text on a dark window): charts take the dark theme.
bool isDarkPalette(const QPalette &palette);
// A run's name written in its colour, readable on the palette's background.
QColor runLabelColor(int index, const QPalette &palette);
// A cell's background by how close it is to trouble (green, amber, red; none when unknown): the
// same three in the numerics table and the decision summary. Text on it is dark in either palette.
QColor riskColor(RiskLevel level);
// Gives `view` a new chart with the shared style (title font, margins, legend, no animation)
// and the title, and returns it for the caller's axes and series.
QChart *setUpChartView(QChartView *view, const QString &title);

// What an axis counts, which decides how its ticks read and whether it may go below zero.
enum class AxisUnit {
    Plain,   // losses, bits: the decimals its ticks differ in
    Count,   // tokens, tokens/s: "500", "15k", "1.5M"; never below zero
    Bytes,   // IEC: "512 KiB", "64 MiB", "1.5 GiB"; never below zero
    Percent, // a share in percent: "0%", "20%"; never below zero
};
// Ticks at a round step, 1, 2 or 5 times a power of ten (of the unit's scale: k, M, or KiB,
// MiB, GiB for bytes), about five of them within [low, high].
struct AxisTicks
{
    double step = 1;
    QVector<double> values;
};
AxisTicks roundTicks(double low, double high, AxisUnit unit, int target = 5);
// One tick's label, with the decimals `step` needs and the unit's suffix.
QString tickLabel(double value, double step, AxisUnit unit);

// Axes with labels at round ticks. `x` and `y` go below and left of the plot.
QCategoryAxis *roundAxis(const QString &title);
void addAxes(QChart *chart, QCategoryAxis *x, QCategoryAxis *y);
// Sets `axis` to [low, high], clipped at zero for a unit that cannot go below it, with labels at
// round ticks; `roundEnds` widens the range to whole steps (not for tokens seen: the data should
// reach the right edge).
void setAxisRange(QCategoryAxis *axis, double low, double high, AxisUnit unit, bool roundEnds = true, int ticks = 5);
// About how many labelled ticks an axis `pixels` long takes without crowding: one per 90 pixels,
// two to six.
int ticksFor(double pixels);

// The extent of the finite points of a chart's curves.
class DataBounds
{
public:
    void add(const QPointF &point); // a point with a non-finite y is left out
    template<typename Points>
    void addAll(const Points &points)
    {
        for (const QPointF &p : points)
            add(p);
    }
    // x over the data's extent (tokens seen reach the right edge), y with 5% room around it;
    // 0 to 1 on both when there is no data.
    void fit(QCategoryAxis *x, AxisUnit xUnit, QCategoryAxis *y, AxisUnit yUnit, int xTicks = 5) const;

private:
    double m_xMin = INFINITY, m_xMax = -INFINITY, m_yMin = INFINITY, m_yMax = -INFINITY;
};

} // namespace optlog
