// SPDX-License-Identifier: MIT
#pragma once

#include <QChartView>
#include <QList>
#include <QString>

class QValueAxis;

namespace optlog {

struct ScatterPoint
{
    QString name;
    double x = 0;
    double y = 0;
};

// One marked point per run, named in the legend: a trade-off at a glance (speed or memory
// against quality).
class ScatterChart : public QChartView
{
    Q_OBJECT
public:
    ScatterChart(const QString &title, const QString &xTitle, const QString &yTitle, QWidget *parent = nullptr);
    void setPoints(const QList<ScatterPoint> &points);
    int pointCount() const { return int(chart()->series().size()); }

private:
    QValueAxis *m_x;
    QValueAxis *m_y;
};

} // namespace optlog
