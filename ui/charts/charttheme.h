// SPDX-License-Identifier: MIT
#pragma once

#include <QColor>
#include <QPointF>
#include <cmath>

class QChart;
class QChartView;
class QString;
class QValueAxis;

namespace optlog {

// The same run keeps the same colour in every chart of a view: colours follow the order in
// which the runs are handed to the charts.
QColor runColor(int index);
// Gives `view` a new chart with the shared style (title font, margins, legend, no animation)
// and the title, and returns it for the caller's axes and series.
QChart *setUpChartView(QChartView *view, const QString &title);
// Titles `x` and `y` and puts them below and left of the plot.
void addValueAxes(QChart *chart, QValueAxis *x, const QString &xTitle, QValueAxis *y, const QString &yTitle);
// Sets a value axis to [low, high] with labels that suit their size; `roundEnds` widens the
// range to round tick values (not for tokens seen: the data should reach the right edge).
void setAxisRange(QValueAxis *axis, double low, double high, bool roundEnds = true);

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
    void fit(QValueAxis *x, QValueAxis *y) const;

private:
    double m_xMin = INFINITY, m_xMax = -INFINITY, m_yMin = INFINITY, m_yMax = -INFINITY;
};

} // namespace optlog
