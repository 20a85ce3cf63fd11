// SPDX-License-Identifier: MIT
#pragma once

#include "core/analysis/runsummary.h"
#include "core/contract/memorytimeline.h"

#include <QChartView>
#include <QList>
#include <QPointF>
#include <QString>
#include <QVector>

class QAbstractSeries;
class QCategoryAxis;

namespace optlog {

// One step's memory timeline (core/contract/memorytimeline.h), or several overlaid, on one axis
// aligned by phase: x is the phase's index plus how far into it the event is, so that the same
// phase of two runs lines up. It shows the bytes in use, the phases as bands (forward, loss,
// backward, the optimizer's parts), the model's states as the step began as the floor by role, the
// peak marked with its bytes and phase, the prediction's peak and the memory budget as lines.
class TimelineChart : public QChartView
{
    Q_OBJECT
public:
    // One run's step, as the chart draws it.
    struct Shown
    {
        QString label; // the run's name
        MemoryTimeline timeline;
        int colorIndex = 0;        // runColor's: the run's colour in every chart of the view
        int64_t predictedPeak = 0; // the memory model's peak (0: none)
        QString predictedPhase;    // and its phase ("backward, block 3"); empty: not named
        int64_t budget = 0;        // the run's memory budget (0: none)
    };

    // A run's step as the workbench and the reports draw it: its prediction and budget beside it.
    static Shown shownOf(const RunSummary &summary, const MemoryTimeline &timeline, int colorIndex);

    explicit TimelineChart(const QString &title, QWidget *parent = nullptr);
    // Draws `shown` on one axis; the bands and the floor are the first's. The y axis reaches
    // `yMax` (0: the highest figure drawn), so that charts side by side share a scale.
    void setTimelines(const QList<Shown> &shown, double yMax = 0);

    // What the legend says of the i-th timeline's peak: "fp32: peak 1.5 MiB at backward, loss".
    QString peakText(int i) const;
    int timelineCount() const { return int(m_peakTexts.size()); }
    // The names the legend lists (the bands are named by the x axis, not listed).
    QStringList legendNames() const;
    // The highest figure drawn: a peak, the prediction or the budget.
    double highestFigure() const { return m_highest; }

    // The points of a timeline on the phase-aligned axis, beginning where its first phase began.
    static QVector<QPointF> phaseAlignedPoints(const MemoryTimeline &timeline);

private:
    void addBands(const MemoryTimeline &timeline, double top);
    void addFloor(const MemoryTimeline &timeline);
    void addLevel(const QString &name, double bytes, double width, const QColor &color);
    void labelPhases(const MemoryTimeline &timeline);

    QCategoryAxis *m_x;
    QCategoryAxis *m_y;
    double plotWidth() const;
    // Leaves `series` out of the legend.
    void unlist(QAbstractSeries *series);

    QStringList m_peakTexts;
    QList<QAbstractSeries *> m_unlisted;
    double m_highest = 0;
};

} // namespace optlog
