// SPDX-License-Identifier: MIT
#include "ui/charts/scatterchart.h"

#include "ui/charts/charttheme.h"

#include <QCategoryAxis>
#include <QFontMetricsF>
#include <QGraphicsLayout>
#include <QGraphicsSimpleTextItem>
#include <QResizeEvent>
#include <QScatterSeries>
#include <algorithm>
#include <cmath>
#include <numeric>

namespace optlog {

namespace {

constexpr double kMarkerSize = 12;
constexpr double kSmallestMarker = 8, kLargestMarker = 26; // sized by memory: area by bytes
constexpr double kLabelGap = 3;                            // between a marker's edge and its label
constexpr int kLabelLines = 6;                             // lines tried above and below a point before giving up

} // namespace

ScatterChart::ScatterChart(const QString &title, const QString &xTitle, AxisUnit xUnit, const QString &yTitle,
                           AxisUnit yUnit, QWidget *parent)
    : QChartView(parent)
    , m_x(roundAxis(xTitle))
    , m_y(roundAxis(yTitle))
    , m_xUnit(xUnit)
    , m_yUnit(yUnit)
{
    QChart *chart = setUpChartView(this, title);
    chart->legend()->hide(); // each point carries its run's name: a legend would not fit
    addAxes(chart, m_x, m_y);
}

void ScatterChart::setBestCorner(Qt::Corner corner, const QString &text)
{
    m_bestCorner = corner;
    m_bestText = text;
    placeLabels();
}

double ScatterChart::markerSize(int point) const
{
    return point >= 0 && point < m_series.size() ? m_series[point]->markerSize() : 0;
}

void ScatterChart::setPoints(const QList<ScatterPoint> &points)
{
    QChart *c = chart();
    c->removeAllSeries();
    m_points.clear();
    m_series.clear();
    m_colours.clear();
    double xMin = INFINITY, xMax = -INFINITY, yMin = INFINITY, yMax = -INFINITY, largest = 0;
    for (const ScatterPoint &p : points)
        largest = std::max(largest, p.size);
    for (int i = 0; i < points.size(); ++i) {
        const ScatterPoint &p = points[i];
        if (!std::isfinite(p.x) || !std::isfinite(p.y))
            continue; // a run without validation loss has no place on a quality axis
        auto *series = new QScatterSeries;
        series->setName(p.name);
        series->setMarkerSize(
            largest > 0
                ? kSmallestMarker + (kLargestMarker - kSmallestMarker) * std::sqrt(std::max(0.0, p.size) / largest)
                : kMarkerSize);
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
        setAxisRange(m_x, 0, 1, m_xUnit);
        setAxisRange(m_y, 0, 1, m_yUnit);
    } else {
        // Room for the largest marker and the labels: a tenth of the span on every side.
        const double xPad = std::max((xMax - xMin) * 0.1, std::abs(xMax) * 0.05 + 1e-9);
        const double yPad = std::max((yMax - yMin) * 0.15, std::abs(yMax) * 0.01 + 1e-9);
        setAxisRange(m_x, xMin - xPad, xMax + xPad, m_xUnit);
        setAxisRange(m_y, yMin - yPad, yMax + yPad, m_yUnit);
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
    delete m_bestItem;
    m_bestItem = nullptr;
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
        const double size = m_series[i]->markerSize();
        taken.append(QRectF(at[i] - QPointF(size / 2, size / 2), QSizeF(size, size)));
    }
    // Left to right; each label on the first free line: just above its point, just below, then
    // further out on either side.
    QList<int> order(m_points.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [this](int a, int b) { return m_points[a].x < m_points[b].x; });
    for (int i : order) {
        const double w = metrics.horizontalAdvance(m_points[i].name), h = metrics.height();
        const double left = std::clamp(at[i].x() - w / 2, area.left(), std::max(area.left(), area.right() - w));
        const double radius = m_series[i]->markerSize() / 2;
        const double above = at[i].y() - radius - kLabelGap - h;
        const double below = at[i].y() + radius + kLabelGap;
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
        item->setBrush(runLabelColor(m_colours[i], palette()));
        item->setPos(chosen.topLeft());
        item->setZValue(10); // above the series
        m_labelItems.append(item);
        m_placed.append({m_points[i].name, chosen, at[i]});
    }
    if (!m_bestText.isEmpty())
        placeBestCorner(area, taken);
}

void ScatterChart::placeBestCorner(const QRectF &area, const QList<QRectF> &taken)
{
    const bool right = m_bestCorner == Qt::TopRightCorner || m_bestCorner == Qt::BottomRightCorner;
    const bool bottom = m_bestCorner == Qt::BottomLeftCorner || m_bestCorner == Qt::BottomRightCorner;
    const QString arrow = bottom ? (right ? QStringLiteral("↘") : QStringLiteral("↙"))
                                 : (right ? QStringLiteral("↗") : QStringLiteral("↖"));
    const QString text = right ? tr("better: %1 %2").arg(m_bestText, arrow)
                               : tr("%1 better: %2").arg(arrow, m_bestText);
    m_bestItem = new QGraphicsSimpleTextItem(text, chart());
    QFont font = chart()->font();
    font.setBold(true);
    m_bestItem->setFont(font);
    m_bestItem->setBrush(palette().color(QPalette::PlaceholderText));
    const QSizeF size = m_bestItem->boundingRect().size();
    const double margin = 4;
    QPointF at(right ? area.right() - size.width() - margin : area.left() + margin,
               bottom ? area.bottom() - size.height() - margin : area.top() + margin);
    // Out of the way of a run's label in that corner: along the edge, away from it.
    for (int tries = 0; tries < 6; ++tries) {
        const QRectF rect(at, size);
        if (std::none_of(taken.begin(), taken.end(), [&](const QRectF &r) { return r.intersects(rect); }))
            break;
        at.ry() += bottom ? -size.height() : size.height();
    }
    m_bestItem->setPos(at);
    m_bestItem->setZValue(5);
}

} // namespace optlog
