// SPDX-License-Identifier: MIT
#include "ui/charts/scatterchart.h"

#include "ui/charts/charttheme.h"

#include <QFontMetricsF>
#include <QGraphicsLayout>
#include <QGraphicsSimpleTextItem>
#include <QResizeEvent>
#include <QScatterSeries>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <numeric>

namespace optlog {

namespace {

constexpr double kMarkerSize = 12;
constexpr double kLabelGap = 3; // between a marker's edge and its label
constexpr int kLabelLines = 6;  // lines tried above and below a point before giving up

} // namespace

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
    m_points.clear();
    m_series.clear();
    m_colours.clear();
    double xMin = INFINITY, xMax = -INFINITY, yMin = INFINITY, yMax = -INFINITY;
    for (int i = 0; i < points.size(); ++i) {
        const ScatterPoint &p = points[i];
        if (!std::isfinite(p.x) || !std::isfinite(p.y))
            continue; // a run without validation loss has no place on a quality axis
        auto *series = new QScatterSeries;
        series->setName(p.name);
        series->setMarkerSize(kMarkerSize);
        series->setColor(runColor(i));
        series->setBorderColor(runColor(i).darker(130));
        series->append(p.x, p.y);
        c->addSeries(series);
        series->attachAxis(m_x);
        series->attachAxis(m_y);
        m_points.append(p);
        m_series.append(series);
        m_colours.append(i);
        xMin = std::min(xMin, p.x);
        xMax = std::max(xMax, p.x);
        yMin = std::min(yMin, p.y);
        yMax = std::max(yMax, p.y);
    }
    if (m_points.isEmpty()) {
        m_x->setRange(0, 1);
        m_y->setRange(0, 1);
    } else {
        const double xPad = std::max((xMax - xMin) * 0.1, std::abs(xMax) * 0.05 + 1e-9);
        const double yPad = std::max((yMax - yMin) * 0.1, std::abs(yMax) * 0.01 + 1e-9);
        setAxisRange(m_x, xMin - xPad, xMax + xPad);
        setAxisRange(m_y, yMin - yPad, yMax + yPad);
    }
    placeLabels();
}

void ScatterChart::resizeEvent(QResizeEvent *event)
{
    QChartView::resizeEvent(event);
    placeLabels();
}

void ScatterChart::placeLabels()
{
    qDeleteAll(m_labelItems);
    m_labelItems.clear();
    m_placed.clear();
    if (m_points.isEmpty())
        return;
    // Lay the chart out for its current size now, not at the next turn of the event loop, so
    // that positions map to where the points will be drawn.
    if (QGraphicsLayout *layout = chart()->layout())
        layout->activate();
    const QRectF area = chart()->plotArea();
    const QFont font = chart()->font();
    const QFontMetricsF metrics(font);

    QList<QPointF> at;
    QList<QRectF> taken; // the markers first: a label must not hide another run's point
    for (int i = 0; i < m_points.size(); ++i) {
        at.append(chart()->mapToPosition(QPointF(m_points[i].x, m_points[i].y), m_series[i]));
        taken.append(QRectF(at[i] - QPointF(kMarkerSize / 2, kMarkerSize / 2), QSizeF(kMarkerSize, kMarkerSize)));
    }
    // Left to right; each label on the first free line: just above its point, just below, then
    // further out on either side.
    QList<int> order(m_points.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [this](int a, int b) { return m_points[a].x < m_points[b].x; });
    for (int i : order) {
        const double w = metrics.horizontalAdvance(m_points[i].name), h = metrics.height();
        const double left = std::clamp(at[i].x() - w / 2, area.left(), std::max(area.left(), area.right() - w));
        const double above = at[i].y() - kMarkerSize / 2 - kLabelGap - h;
        const double below = at[i].y() + kMarkerSize / 2 + kLabelGap;
        QRectF chosen(left, above, w, h);
        for (int line = 0; line < 2 * kLabelLines; ++line) {
            const double top = line % 2 == 0 ? above - (line / 2) * h : below + (line / 2) * h;
            const QRectF candidate(left, top, w, h);
            const bool free = std::none_of(taken.begin(), taken.end(),
                                           [&](const QRectF &r) { return r.intersects(candidate); });
            if (free) {
                chosen = candidate;
                break;
            }
        }
        taken.append(chosen);
        auto *item = new QGraphicsSimpleTextItem(m_points[i].name, chart());
        item->setFont(font);
        item->setBrush(runColor(m_colours[i]).darker(160));
        item->setPos(chosen.topLeft());
        item->setZValue(10); // above the series
        m_labelItems.append(item);
        m_placed.append({m_points[i].name, chosen, at[i]});
    }
}

} // namespace optlog
