// SPDX-License-Identifier: MIT
#pragma once

#include "ui/charts/charttheme.h"

#include <QChartView>
#include <QList>
#include <QRectF>
#include <QString>

class QCategoryAxis;
class QGraphicsSimpleTextItem;
class QScatterSeries;

namespace optlog {

struct ScatterPoint
{
    QString name;
    double x = 0;
    double y = 0;
    double size = 0; // the marker's area follows it (peak bytes); 0 for all: every marker alike
};

// One marked point per run, labelled with its name in the run's colour: a trade-off at a glance
// (speed or memory against quality). Runs that land close together would print their names over
// each other, so each label takes the nearest free line above or below its point (placed again
// whenever the view resizes).
class ScatterChart : public QChartView
{
    Q_OBJECT
public:
    ScatterChart(const QString &title, const QString &xTitle, AxisUnit xUnit, const QString &yTitle, AxisUnit yUnit,
                 QWidget *parent = nullptr);
    void setPoints(const QList<ScatterPoint> &points);
    // Names the corner where the best trade-off lies ("faster, lower loss"), written in it with an arrow.
    void setBestCorner(Qt::Corner corner, const QString &text);
    double markerSize(int point) const; // in pixels, of the drawn points in order
    int pointCount() const { return int(chart()->series().size()); }

    struct PlacedLabel
    {
        QString text;
        QRectF rect;   // in the chart's coordinates
        QPointF point; // the marker's centre, likewise
    };
    QList<PlacedLabel> labels() const { return m_placed; }

protected:
    void resizeEvent(QResizeEvent *event) override;

private:
    void placeLabels();
    void placeBestCorner(const QRectF &area, const QList<QRectF> &taken);

    QCategoryAxis *m_x;
    QCategoryAxis *m_y;
    AxisUnit m_xUnit, m_yUnit;
    Qt::Corner m_bestCorner = Qt::BottomRightCorner;
    QString m_bestText;
    QGraphicsSimpleTextItem *m_bestItem = nullptr;
    QList<ScatterPoint> m_points;     // the drawn ones, in the order given
    QList<QScatterSeries *> m_series; // one per drawn point
    QList<int> m_colours;             // each drawn point's run colour index
    QList<QGraphicsSimpleTextItem *> m_labelItems;
    QList<PlacedLabel> m_placed;
};

} // namespace optlog
