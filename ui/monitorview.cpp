// SPDX-License-Identifier: MIT
#include "ui/monitorview.h"

#include "core/contract/format.h"
#include "ui/charts/linechart.h"

#include <QElapsedTimer>
#include <QGridLayout>
#include <QLabel>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

namespace optlog {

namespace { }

MonitorView::MonitorView(QWidget *parent)
    : QWidget(parent)
    , m_header(new QLabel)
    , m_loss(new LineChart(tr("Loss"), tr("tokens seen"), tr("nats per token"), AxisUnit::Plain))
    , m_speed(new LineChart(tr("Throughput"), tr("tokens seen"), tr("tokens/s"), AxisUnit::Count))
    , m_memory(new LineChart(tr("Allocator memory"), tr("tokens seen"), tr("bytes"), AxisUnit::Bytes))
    , m_numerics(
          new LineChart(tr("FP16 underflow, no scaler"), tr("tokens seen"), tr("gradient elements"), AxisUnit::Percent))
{
    m_header->setTextFormat(Qt::RichText);
    m_header->setWordWrap(true);
    auto *charts = new QGridLayout;
    charts->addWidget(m_loss, 0, 0, 1, 3);
    charts->addWidget(m_speed, 1, 0);
    charts->addWidget(m_memory, 1, 1);
    charts->addWidget(m_numerics, 1, 2);
    charts->setRowStretch(0, 3);
    charts->setRowStretch(1, 2);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_header);
    layout->addLayout(charts, 1);

    // Throttle, not debounce: a steady stream of events must still redraw about once a second.
    m_redraw.setSingleShot(true);
    m_redraw.setInterval(1000);
    connect(&m_redraw, &QTimer::timeout, this, &MonitorView::redraw);
    clear();
    redraw();
}

QString MonitorView::headerText() const
{
    return m_header->text();
}

void MonitorView::clear()
{
    m_trainLoss.clear();
    m_validationLoss.clear();
    m_instabilities.clear();
    m_tokensPerSecond.clear();
    m_allocatedBytes.clear();
    m_peakBytes.clear();
    m_lastStep = -1;
    m_elapsedSeconds = 0;
}

void MonitorView::showRun(const RunSnapshotPtr &run, const QString &source)
{
    if (!run)
        return;
    const RunRecord &record = run->run();
    m_name = QString::fromStdString(record.name);
    m_source = source;
    m_recorder = QString::fromStdString(run->summary.recorder);
    takeNumerics(*run); // not streamed: the study file has them, live or not
    if (m_live && record.id == m_runId) {
        m_totalSteps = run->totalSteps;
        if (run->isFinished())
            m_live = false; // the engine's last events are in; the file now has everything
        scheduleRedraw();
        return;
    }
    m_live = false;
    m_runId = record.id;
    m_totalSteps = run->totalSteps;
    clear();
    for (const auto &m : run->metrics) {
        if (std::isfinite(m.trainLoss)) // a diverged step has no loss to draw
            m_trainLoss.append({double(m.tokens), m.trainLoss});
        m_tokensPerSecond.append({double(m.tokens), m.tokensPerSecond});
        m_lastStep = m.step;
        m_elapsedSeconds += m.stepSeconds;
    }
    for (const auto &v : run->summary.validation)
        m_validationLoss.append({double(v.tokens), v.loss});
    for (int64_t step : run->summary.instabilitySteps) {
        const auto m = std::find_if(run->metrics.begin(), run->metrics.end(),
                                    [step](const StepMetrics &s) { return s.step == step; });
        if (m != run->metrics.end() && std::isfinite(m->trainLoss))
            m_instabilities.append({double(m->tokens), m->trainLoss});
    }
    scheduleRedraw();
}

void MonitorView::takeNumerics(const RunSnapshot &run)
{
    m_underflow.clear();
    const auto &rows = run.summary.numerics;
    if (rows.empty() || !run.summary.config)
        return;
    const double tokensPerStep = double(run.summary.config->tokensPerStep());
    const int64_t last = rows.back().step;
    std::vector<std::pair<double, std::string>> worst;
    for (const auto &row : rows)
        if (row.step == last && row.tensor != kAllParameters && !std::isnan(row.fp16Underflow))
            worst.emplace_back(row.fp16Underflow, row.tensor);
    std::sort(worst.rbegin(), worst.rend());
    worst.resize(std::min<size_t>(worst.size(), 4));
    std::vector<std::string> shown = {kAllParameters};
    for (const auto &[fraction, tensor] : worst)
        shown.push_back(tensor);
    for (const auto &tensor : shown) {
        LineSeriesData line{QString::fromStdString(tensor), {}};
        for (const auto &row : rows)
            if (row.tensor == tensor && !std::isnan(row.fp16Underflow))
                line.points.append({double(row.step + 1) * tokensPerStep, 100 * row.fp16Underflow});
        m_underflow << line;
    }
}

void MonitorView::handleEvent(const EngineEvent &event)
{
    if (const auto *started = std::get_if<RunStarted>(&event.body)) {
        m_live = true;
        m_runId = event.run;
        m_name.clear();
        m_recorder.clear(); // the queue's own engine
        m_source.clear();
        m_totalSteps = started->totalSteps;
        clear();
        scheduleRedraw();
        return;
    }
    if (!m_live || event.run != m_runId)
        return;
    if (const auto *step = std::get_if<StepDone>(&event.body)) {
        const StepMetrics &m = step->metrics;
        const double tokens = double(m.tokens);
        if (std::isfinite(m.trainLoss)) // a diverged step has no loss to draw
            m_trainLoss.append({tokens, m.trainLoss});
        m_tokensPerSecond.append({tokens, m.tokensPerSecond});
        if (step->allocatedBytes && step->peakBytes) {
            m_allocatedBytes.append({tokens, double(*step->allocatedBytes)});
            m_peakBytes.append({tokens, double(*step->peakBytes)});
        }
        m_lastStep = m.step;
        m_elapsedSeconds += m.stepSeconds;
    } else if (const auto *validated = std::get_if<Validated>(&event.body)) {
        m_validationLoss.append({double(validated->point.tokens), validated->point.loss});
    } else if (const auto *message = std::get_if<LogMessage>(&event.body)) {
        // The recorder sends an instability right after its step: that step's point is the last.
        if (isInstability(message->kind) && message->step == m_lastStep && !m_trainLoss.isEmpty())
            m_instabilities.append(m_trainLoss.last());
    } else if (std::holds_alternative<RunFinished>(event.body)) {
        m_live = false;
    }
    scheduleRedraw();
}

void MonitorView::scheduleRedraw()
{
    if (!m_redraw.isActive())
        m_redraw.start();
}

void MonitorView::redraw()
{
    QElapsedTimer timer;
    timer.start();
    if (m_runId == 0) {
        m_header->setText(tr("<b>No run to monitor.</b> Start the queue (Ctrl+R) or select a run in the runs table."));
    } else {
        const qint64 done = m_lastStep + 1;
        const QString name = m_name.isEmpty() ? tr("starting") : m_name.toHtmlEscaped();
        QString line = m_source.isEmpty() ? tr("<b>%1</b> (run %2)").arg(name).arg(m_runId)
                                          : tr("<b>%1</b> (%2)").arg(name, m_source.toHtmlEscaped());
        // A run its own trainer reports through `optlog record`: followed from the study file.
        if (!m_recorder.isEmpty())
            line += tr(" · <i>recorded by %1, not launched here</i>").arg(m_recorder.toHtmlEscaped());
        if (m_totalSteps > 0)
            line += tr(" · step %1 of %2").arg(done).arg(m_totalSteps);
        if (!m_tokensPerSecond.isEmpty())
            line += tr(" · %1 tokens/s").arg(m_tokensPerSecond.last().y(), 0, 'f', 0);
        if (!m_validationLoss.isEmpty())
            line += tr(" · validation loss %1").arg(m_validationLoss.last().y(), 0, 'f', 4);
        if (m_live && done > 0 && m_totalSteps > done)
            line += tr(" · about %1 s left")
                        .arg(m_elapsedSeconds / double(done) * double(m_totalSteps - done), 0, 'f', 0);
        if (!m_peakBytes.isEmpty())
            line += tr(" · allocator peak %1").arg(QString::fromStdString(formatBytes(qint64(m_peakBytes.last().y()))));
        line += m_live ? tr(" · <i>live</i>") : QString();
        m_header->setText(line);
    }
    // Behind another page the charts wait: drawing what nobody sees would only stall the page shown.
    if (!isVisible()) {
        m_chartsStale = true;
        return;
    }
    m_chartsStale = false;
    m_loss->setSeries({{tr("train"), m_trainLoss}, {tr("validation"), m_validationLoss}});
    m_loss->setMarkers(tr("instabilities (%1)").arg(m_instabilities.size()), m_instabilities);
    m_speed->setSeries({{tr("tokens/s"), m_tokensPerSecond}});
    m_memory->setSeries({{tr("in use"), m_allocatedBytes}, {tr("peak"), m_peakBytes}});
    m_numerics->setSeries(m_underflow);
    ++m_redraws;
    m_lastRedrawMs = double(timer.nsecsElapsed()) / 1e6;
}

void MonitorView::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    if (m_chartsStale)
        redraw();
}

} // namespace optlog
