// SPDX-License-Identifier: MIT
#pragma once

#include "core/contract/engineevents.h"
#include "ui/charts/linechart.h"
#include "ui/studysnapshot.h"

#include <QPointF>
#include <QTimer>
#include <QVector>
#include <QWidget>

class QLabel;

namespace optlog {

// One run as it trains: train and validation loss against tokens seen (instabilities marked on
// the train loss), tokens/s, the allocator's current and peak bytes, and the share of gradient
// elements FP16 would zero (all parameters and the worst tensors, from the study file). Live engine events arrive as fast as the engine sends
// them; the charts redraw at most once per redraw interval.
class MonitorView : public QWidget
{
    Q_OBJECT
public:
    explicit MonitorView(QWidget *parent = nullptr);

    // A run from the study file (a finished one, or one started elsewhere). Ignored while the
    // same run streams live: its events are newer than the file. `source` says where the run is
    // when it is not the study's (a cluster task's shard); the header names it in place of the id.
    void showRun(const RunSnapshotPtr &run, const QString &source = {});
    // One event of the engine the queue runs (started, step, validation, finished, ...).
    void handleEvent(const EngineEvent &event);
    void setRedrawInterval(int milliseconds) { m_redraw.setInterval(milliseconds); }

    qint64 runId() const { return m_runId; }
    bool isLive() const { return m_live; }
    QString headerText() const;
    qsizetype trainPoints() const { return m_trainLoss.size(); }
    qsizetype validationPoints() const { return m_validationLoss.size(); }
    qsizetype instabilityMarks() const { return m_instabilities.size(); }
    int redraws() const { return m_redraws; } // of the charts: none while the page is hidden
    double lastRedrawMilliseconds() const { return m_lastRedrawMs; }

protected:
    void showEvent(QShowEvent *event) override;

private:
    // The numerics diagnostics of `run` as lines against tokens: every parameter together, then
    // the tensors that FP16 would hurt most at the last measured step.
    void takeNumerics(const RunSnapshot &run);
    void scheduleRedraw();
    void redraw();
    void clear();

    QLabel *m_header;
    LineChart *m_loss;
    LineChart *m_speed;
    LineChart *m_memory;
    LineChart *m_numerics;
    QTimer m_redraw;
    qint64 m_runId = 0;
    bool m_live = false;
    QString m_name;
    QString m_source;   // where the run shown is read from, when not the study: "on Slurm as job 4242_1"
    QString m_recorder; // who recorded the run shown (`optlog record`); empty for the engine's runs
    qint64 m_totalSteps = 0;
    qint64 m_lastStep = -1;
    double m_elapsedSeconds = 0;
    QVector<QPointF> m_trainLoss; // (tokens, nats per token)
    QVector<QPointF> m_validationLoss;
    QVector<QPointF> m_instabilities; // on the train loss: spikes, skipped steps, non-finite values
    QVector<QPointF> m_tokensPerSecond;
    QVector<QPointF> m_allocatedBytes;
    QVector<QPointF> m_peakBytes;
    QList<LineSeriesData> m_underflow; // % of gradient elements, per tensor
    bool m_chartsStale = false;        // events arrived while hidden: the charts redraw when shown
    int m_redraws = 0;
    double m_lastRedrawMs = 0;
};

} // namespace optlog
