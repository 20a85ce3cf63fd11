// SPDX-License-Identifier: MIT
#include "ui/charts/linechart.h"

#include "ui/charts/charttheme.h"

#include <QCategoryAxis>
#include <QLegendMarker>
#include <QLineSeries>
#include <QScatterSeries>
#include <algorithm>
#include <cmath>

namespace optlog {

LineChart::LineChart(const QString &title, const QString &xTitle, const QString &yTitle, AxisUnit yUnit, QWidget *parent)
    : CurveChart(title, xTitle, yTitle, yUnit, parent)
{ }

QVector<QPointF> LineChart::downsample(const QVector<QPointF> &points, int maxPoints)
{
    if (points.size() <= maxPoints || maxPoints < 4)
        return points;
    const int buckets = (maxPoints - 2) / 2;
    const double x0 = points.front().x();
    const double width = (points.back().x() - x0) / buckets;
    QVector<QPointF> out;
    out.reserve(maxPoints);
    out.append(points.front());
    qsizetype i = 1;
    for (int b = 0; b < buckets && i < points.size() - 1; ++b) {
        const double end = b == buckets - 1 ? points.back().x() : x0 + width * (b + 1);
        qsizetype lo = -1, hi = -1;
        for (; i < points.size() - 1 && (points[i].x() <= end || width <= 0); ++i) {
            if (lo < 0 || points[i].y() < points[lo].y())
                lo = i;
            if (hi < 0 || points[i].y() > points[hi].y())
                hi = i;
        }
        if (lo < 0)
            continue;
        out.append(points[std::min(lo, hi)]);
        if (hi != lo)
            out.append(points[std::max(lo, hi)]);
    }
    out.append(points.back());
    return out;
}

void LineChart::setSeries(const QList<LineSeriesData> &series)
{
    QChart *c = chart();
    QList<QAbstractSeries *> existing = c->series();
    // Drop series whose name is gone; reuse the rest (replace() is one repaint, clear+append is many).
    for (QAbstractSeries *s : existing) {
        if (s == m_markers)
            continue;
        const bool kept = std::any_of(series.begin(), series.end(),
                                      [s](const LineSeriesData &d) { return d.name == s->name(); });
        if (!kept) {
            c->removeSeries(s);
            delete s;
        }
    }
    // Two points per pixel column keep every spike a column can show; more only cost drawing time.
    const int displayPoints = std::min(kMaxDisplayPoints, std::max(400, 2 * width()));
    DataBounds bounds;
    for (int i = 0; i < series.size(); ++i) {
        const LineSeriesData &data = series[i];
        QLineSeries *line = nullptr;
        for (QAbstractSeries *s : c->series())
            if (s != m_markers && s->name() == data.name)
                line = static_cast<QLineSeries *>(s);
        if (!line) {
            line = new QLineSeries;
            line->setName(data.name);
            addOnAxes(line);
        }
        // One pixel wide: the raster engine draws such a line on its fast path, where a wider pen is
        // stroked as an outline, which made a redraw of four dense charts cost tens of milliseconds.
        QPen pen(runColor(i));
        pen.setWidthF(1.0);
        line->setPen(pen);
        const QVector<QPointF> shown = downsample(data.points, displayPoints);
        line->replace(shown);
        bounds.addAll(shown);
    }
    // Many runs in a wide chart: names beside the plot, where each gets a line; else below it,
    // where they leave a narrow plot its width (a name cut short shows whole on hover).
    c->legend()->setAlignment(series.size() > 3 && width() > 600 ? Qt::AlignRight : Qt::AlignBottom);
    fitAxes(bounds);
}

void LineChart::setMarkers(const QString &name, const QVector<QPointF> &points)
{
    if (!m_markers) {
        m_markers = newInstabilityMarkers(QColor(220, 40, 40));
        addOnAxes(m_markers);
    }
    m_markers->setName(name);
    m_markers->replace(points);
    for (QLegendMarker *marker : chart()->legend()->markers(m_markers))
        marker->setVisible(!points.isEmpty());
}

qsizetype LineChart::markerCount() const
{
    return m_markers ? m_markers->count() : 0;
}

int LineChart::seriesCount() const
{
    return int(chart()->series().size()) - (m_markers ? 1 : 0);
}

qsizetype LineChart::displayedPoints(const QString &name) const
{
    for (QAbstractSeries *s : chart()->series())
        if (s != m_markers && s->name() == name)
            return static_cast<QLineSeries *>(s)->count();
    return 0;
}

} // namespace optlog
