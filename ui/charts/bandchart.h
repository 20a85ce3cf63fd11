// SPDX-License-Identifier: MIT
#pragma once

#include "ui/charts/curvechart.h"

#include <QList>
#include <QPointF>
#include <QString>
#include <QVector>

namespace optlog {

// One group's curves: a run's replicates over seeds, each ascending in x.
struct BandGroupData
{
    QString name;
    QList<QVector<QPointF>> replicates;
    QVector<double> markerX; // where something happened (an instability): marked on the mean curve
};

// The mean of replicate curves with the band from their lowest to highest value.
struct Band
{
    QVector<QPointF> mean, low, high;
};

// Curves of groups over seeds: each group's mean as a line, the band from the lowest to the
// highest replicate shaded beneath it, each seed faint, and markers on the mean where an
// instability happened. The legend names each group with its seed count and what the band is.
// A group of one seed is a plain line.
class BandChart : public CurveChart
{
    Q_OBJECT
public:
    BandChart(const QString &title, const QString &xTitle, const QString &yTitle, AxisUnit yUnit,
              QWidget *parent = nullptr);

    void setGroups(const QList<BandGroupData> &groups);
    // The legend's entries, in order: what a reader sees the lines called.
    QStringList legendNames() const;

    // At each x of the first replicate that every replicate covers: the mean, lowest and highest
    // of the replicates' values there (linearly interpolated between their points).
    static Band band(const QList<QVector<QPointF>> &replicates);

private:
    QStringList m_legendNames;
};

} // namespace optlog
