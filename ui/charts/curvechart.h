// SPDX-License-Identifier: MIT
#pragma once

#include "ui/charts/charttheme.h"

#include <QChartView>
#include <QColor>
#include <QString>

class QAbstractSeries;
class QCategoryAxis;
class QScatterSeries;

namespace optlog {

// Curves against tokens seen: a chart view with a round x axis of counts and a round y axis in
// its own unit, each series on both. What LineChart and BandChart share.
class CurveChart : public QChartView
{
    Q_OBJECT
protected:
    CurveChart(const QString &title, const QString &xTitle, const QString &yTitle, AxisUnit yUnit, QWidget *parent);

    // Adds `series` to the chart, on both axes.
    void addOnAxes(QAbstractSeries *series);
    // Both axes over `bounds` at round values, as many x ticks as the plot's width has room for.
    void fitAxes(const DataBounds &bounds);
    // Where an instability happened: squares of `color` with a black border, not yet on the chart.
    static QScatterSeries *newInstabilityMarkers(const QColor &color);

private:
    QCategoryAxis *m_x; // tokens seen
    QCategoryAxis *m_y;
    AxisUnit m_yUnit;
};

} // namespace optlog
