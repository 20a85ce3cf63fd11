// SPDX-License-Identifier: MIT
// The designer's prediction of the designed run's memory by role: the memory model's for optlog's
// GPT, a TorchScript module's probes for one of the user's own.
#include "core/analysis/runtables.h"
#include "core/contract/format.h"
#include "core/memorymodel/memorymodel.h"
#include "ui/designerview.h"
#include "ui/moduleprobe.h"

#include <QFileInfo>
#include <QGroupBox>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

namespace optlog {

QWidget *DesignerView::buildPrediction()
{
    auto *group = new QGroupBox(tr("Predicted memory by role"));
    group->setToolTip(tr("From optlog's memory model of this GPT (docs/memory-model.md), or a TorchScript "
                         "module's probes (docs/torchscript.md); the run measures each role and shows both."));
    m_probe->setToolTip(tr("Runs the module for a few short steps in the engine, at microbatch 1 and 2 and "
                           "three contexts, and fits its saved activations and temporaries; kept by the file's "
                           "SHA-256, so once per setting."));
    m_probe->hide();
    m_prediction->setHorizontalHeaderLabels({tr("Role"), tr("Dtype"), tr("Bytes")});
    m_prediction->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    m_prediction->verticalHeader()->hide();
    m_prediction->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_prediction->setSelectionMode(QAbstractItemView::NoSelection);
    m_predictionSummary->setWordWrap(true);
    auto *layout = new QVBoxLayout(group);
    layout->addWidget(m_prediction);
    layout->addWidget(m_predictionSummary);
    layout->addWidget(m_probe, 0, Qt::AlignLeft);
    return group;
}

void DesignerView::showPrediction(const PlannedRun &run)
{
    m_prediction->setRowCount(0);
    m_probe->hide();
    RunConfig config;
    try {
        config = run.config();
    } catch (const ConfigError &) {
        m_predictionSummary->setText(tr("Fix the marked fields to see the prediction."));
        return;
    }
    MemoryEstimate estimate;
    if (config.model.source == ModelSource::Builtin) {
        estimate = estimateMemory(config);
    } else if (m_moduleProbe->isProbing()) {
        m_predictionSummary->setText(tr("Probing the module: a few short runs of it in the engine…"));
        return;
    } else {
        QString why;
        const auto cached = m_moduleProbe->cachedEstimate(config, why);
        if (!cached) {
            if (!m_moduleProbe->lastError().isEmpty())
                why += tr(" The last probe failed: %1").arg(m_moduleProbe->lastError());
            m_predictionSummary->setText(why);
            m_probe->setVisible(m_moduleProbe->canProbe()
                                && QFileInfo::exists(QString::fromStdString(config.model.path)));
            return;
        }
        estimate = *cached;
    }
    for (const auto &role : estimate.roles) {
        const int row = m_prediction->rowCount();
        m_prediction->insertRow(row);
        auto *name = new QTableWidgetItem(QString::fromLatin1(memoryRoleLabel(role.role)));
        name->setToolTip(QString::fromStdString(role.note));
        m_prediction->setItem(row, 0, name);
        m_prediction->setItem(row, 1, new QTableWidgetItem(QString::fromStdString(role.dtype)));
        auto *bytes = new QTableWidgetItem(QString::fromStdString(formatBytes(role.bytes)));
        bytes->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        m_prediction->setItem(row, 2, bytes);
    }
    // Where in the step the peak falls, as the run's memory timeline will name its phase.
    const QString where = config.model.source == ModelSource::Builtin
                              ? tr(", at %1").arg(QString::fromStdString(estimate.peakPhase.name()))
                              : QString();
    QString summary = tr("Peak over a complete step%1: <b>%2</b>%3; batch: %4, %5 tokens per optimizer step.")
                          .arg(config.distributed.ranks > 1 ? tr(", per rank") : QString())
                          .arg(QString::fromStdString(formatBytes(estimate.peakBytes)))
                          .arg(where)
                          .arg(QString::fromStdString(effectiveBatch(config)))
                          .arg(config.tokensPerStep());
    if (config.model.source != ModelSource::Builtin)
        summary += tr(" From the %1.").arg(QString::fromStdString(estimate.source).toHtmlEscaped());
    if (m_runs.size() > 1)
        summary += tr(" Shown for the first of %1 sweep runs.").arg(m_runs.size());
    m_predictionSummary->setText(summary);
}

QString DesignerView::predictionSummary() const
{
    return m_predictionSummary->text();
}

QStringList DesignerView::predictedRoles() const
{
    QStringList rows;
    for (int row = 0; row < m_prediction->rowCount(); ++row)
        rows << m_prediction->item(row, 0)->text() + QStringLiteral(": ") + m_prediction->item(row, 2)->text();
    return rows;
}

bool DesignerView::probeModule()
{
    const PlannedRun run = m_runs.isEmpty() ? designedRun() : m_runs.front();
    RunConfig config;
    try {
        config = run.config();
    } catch (const ConfigError &) {
        return false;
    }
    if (config.model.source == ModelSource::Builtin || !m_moduleProbe->probe(config))
        return false;
    showPrediction(run);
    return true;
}

bool DesignerView::isProbingModule() const
{
    return m_moduleProbe->isProbing();
}

} // namespace optlog
