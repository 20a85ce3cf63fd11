// SPDX-License-Identifier: MIT
#include "ui/charts/curvechart.h"

#include <QCategoryAxis>
#include <QChart>
#include <QScatterSeries>

namespace optlog {

CurveChart::CurveChart(const QString &title, const QString &xTitle, const QString &yTitle, AxisUnit yUnit,
                       QWidget *parent)
    : QChartView(parent)
    , m_x(roundAxis(xTitle))
    , m_y(roundAxis(yTitle))
    , m_yUnit(yUnit)
{
    addAxes(setUpChartView(this, title), m_x, m_y);
}

void CurveChart::addOnAxes(QAbstractSeries *series)
{
    chart()->addSeries(series);
    series->attachAxis(m_x);
    series->attachAxis(m_y);
}

void CurveChart::fitAxes(const DataBounds &bounds)
{
    // The plot's width once laid out (the view's before): a narrow chart gets fewer ticks.
    const double plotWidth = chart()->plotArea().width() > 0 ? chart()->plotArea().width() : width() * 0.7;
    bounds.fit(m_x, AxisUnit::Count, m_y, m_yUnit, ticksFor(plotWidth));
}

QScatterSeries *CurveChart::newInstabilityMarkers(const QColor &color)
{
    auto *markers = new QScatterSeries;
    markers->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
    markers->setMarkerSize(8);
    markers->setColor(color);
    markers->setBorderColor(Qt::black);
    return markers;
}

} // namespace optlog
