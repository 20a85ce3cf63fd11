// SPDX-License-Identifier: MIT
#include "ui/charts/scatterchart.h"

#include "ui/charts/charttheme.h"

#include <QScatterSeries>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace optlog {

ScatterChart::ScatterChart(const QString &title, const QString &xTitle, const QString &yTitle, QWidget *parent)
    : QChartView(parent)
    , m_x(new QValueAxis)
    , m_y(new QValueAxis)
{
    QChart *chart = setUpChartView(this, title);
    chart->legend()->hide(); // each point carries its run's name: a legend would not fit
    addValueAxes(chart, m_x, xTitle, m_y, yTitle);
}

void ScatterChart::setPoints(const QList<ScatterPoint> &points)
{
    QChart *c = chart();
    c->removeAllSeries();
    double xMin = INFINITY, xMax = -INFINITY, yMin = INFINITY, yMax = -INFINITY;
    for (int i = 0; i < points.size(); ++i) {
        const ScatterPoint &p = points[i];
        if (!std::isfinite(p.x) || !std::isfinite(p.y))
            continue; // a run without validation loss has no place on a quality axis
        auto *series = new QScatterSeries;
        series->setName(p.name);
        series->setMarkerSize(12);
        series->setColor(runColor(i));
        series->setBorderColor(runColor(i).darker(130));
        series->append(p.x, p.y);
        series->setPointLabelsFormat(p.name);
        series->setPointLabelsVisible(true);
        series->setPointLabelsClipping(false);
        c->addSeries(series);
        series->attachAxis(m_x);
        series->attachAxis(m_y);
        xMin = std::min(xMin, p.x);
        xMax = std::max(xMax, p.x);
        yMin = std::min(yMin, p.y);
        yMax = std::max(yMax, p.y);
    }
    if (xMin > xMax) {
        m_x->setRange(0, 1);
        m_y->setRange(0, 1);
        return;
    }
    const double xPad = std::max((xMax - xMin) * 0.1, std::abs(xMax) * 0.05 + 1e-9);
    const double yPad = std::max((yMax - yMin) * 0.1, std::abs(yMax) * 0.01 + 1e-9);
    setAxisRange(m_x, xMin - xPad, xMax + xPad);
    setAxisRange(m_y, yMin - yPad, yMax + yPad);
}

} // namespace optlog
