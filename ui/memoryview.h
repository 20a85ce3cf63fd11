// SPDX-License-Identifier: MIT
#pragma once

#include "ui/charts/timelinechart.h"
#include "ui/studysnapshot.h"

#include <QList>
#include <QWidget>

class QComboBox;
class QGridLayout;
class QLabel;

namespace optlog {

// The memory timelines of the runs selected in the Runs list, one step each: side by side on one
// scale, or overlaid on one axis aligned by phase. Which step: the first measured (the steady step
// whose peak the run reports), or the first (where AdamW's moments are made). Each chart shows the
// phases, the floor by role, the peak with its phase, the memory model's peak and the budget.
class MemoryView : public QWidget
{
    Q_OBJECT
public:
    enum class Step { FirstMeasured, First };
    enum class Arrangement { SideBySide, Overlaid };

    explicit MemoryView(QWidget *parent = nullptr);

    // The runs to show, in the order given (the colours follow it); redrawn when the page shows.
    void setRuns(const QList<RunSnapshotPtr> &runs);
    void setStep(Step step);
    void setArrangement(Arrangement arrangement);

    QList<TimelineChart *> charts() const { return m_charts; }
    QString summaryText() const;
    // The longest chart's drawing in the last redraw (its painting not counted).
    double lastDrawMilliseconds() const { return m_lastDrawMs; }
    bool drawing() const { return !m_pending.isEmpty(); } // charts still to draw

protected:
    void showEvent(QShowEvent *event) override;

private:
    void redraw();
    void drawNext(); // the next chart of m_pending
    // What each selected run shows for the chosen step; runs without one are named in the summary.
    QList<TimelineChart::Shown> shownTimelines(QStringList &without) const;

    QList<RunSnapshotPtr> m_runs;
    QComboBox *m_step;
    QComboBox *m_arrangement;
    QLabel *m_summary;
    QWidget *m_area;
    QGridLayout *m_grid;
    QList<TimelineChart *> m_made;   // every chart made so far
    QList<TimelineChart *> m_charts; // the ones shown: the first of m_made
    struct Pending
    {
        TimelineChart *chart;
        QString title;
        QList<TimelineChart::Shown> shown;
        double yMax = 0;
    };
    QList<Pending> m_pending;
    bool m_stale = false; // the runs changed while the page was hidden
    double m_lastDrawMs = 0;
};

} // namespace optlog
