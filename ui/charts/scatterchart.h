// SPDX-License-Identifier: MIT
#pragma once

#include <QChartView>
#include <QList>
#include <QRectF>
#include <QString>

class QGraphicsSimpleTextItem;
class QScatterSeries;
class QValueAxis;

namespace optlog {

struct ScatterPoint
{
    QString name;
    double x = 0;
    double y = 0;
};

// One marked point per run, labelled with its name in the run's colour: a trade-off at a glance
// (speed or memory against quality). Runs that land close together would print their names over
// each other, so each label takes the nearest free line above or below its point (placed again
// whenever the view resizes).
class ScatterChart : public QChartView
{
    Q_OBJECT
public:
    ScatterChart(const QString &title, const QString &xTitle, const QString &yTitle, QWidget *parent = nullptr);
    void setPoints(const QList<ScatterPoint> &points);
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

    QValueAxis *m_x;
    QValueAxis *m_y;
    QList<ScatterPoint> m_points;     // the drawn ones, in the order given
    QList<QScatterSeries *> m_series; // one per drawn point
    QList<int> m_colours;             // each drawn point's run colour index
    QList<QGraphicsSimpleTextItem *> m_labelItems;
    QList<PlacedLabel> m_placed;
};

} // namespace optlog
