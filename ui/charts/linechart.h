// SPDX-License-Identifier: MIT
#pragma once

#include "ui/charts/curvechart.h"

#include <QList>
#include <QPointF>
#include <QString>
#include <QVector>

class QScatterSeries;

namespace optlog {

struct LineSeriesData
{
    QString name;
    QVector<QPointF> points; // ascending x
};

// Lines against a shared x axis (tokens seen, usually). Keeps one QLineSeries per name across
// updates and replaces their points in one call; long series are downsampled for display only.
class LineChart : public CurveChart
{
    Q_OBJECT
public:
    LineChart(const QString &title, const QString &xTitle, const QString &yTitle, AxisUnit yUnit,
              QWidget *parent = nullptr);

    void setSeries(const QList<LineSeriesData> &series);
    // Points marked on top of the lines (instabilities), as one legend entry `name`; none hides it.
    void setMarkers(const QString &name, const QVector<QPointF> &points);
    qsizetype markerCount() const;
    int seriesCount() const;
    qsizetype displayedPoints(const QString &name) const;

    // Keeps the first and last point and, per bucket of x, the lowest and highest y: spikes stay
    // visible (a divergence must not be smoothed away) at a bounded point count.
    static QVector<QPointF> downsample(const QVector<QPointF> &points, int maxPoints);

private:
    // A line never draws more points than this, however wide the chart.
    static constexpr int kMaxDisplayPoints = 2000;
    QScatterSeries *m_markers = nullptr;
};

} // namespace optlog
