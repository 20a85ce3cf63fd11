// SPDX-License-Identifier: MIT
#include "ui/machinetuning.h"

#include "core/config/tuning.h"

#include <utility>

namespace optlog {

MachineTuning::MachineTuning(QString optlogBinary, QObject *parent)
    : QObject(parent)
    , m_optlog(std::move(optlogBinary))
{
    connect(&m_status, &QProcess::finished, this, [this](int exitCode, QProcess::ExitStatus status) {
        m_families.clear();
        if (status == QProcess::NormalExit && exitCode == 0)
            for (const QString &line : QString::fromUtf8(m_status.readAllStandardOutput()).split(u'\n'))
                if (!line.trimmed().isEmpty())
                    m_families << line.trimmed();
        Q_EMIT changed();
    });
    connect(&m_tune, &QProcess::readyReadStandardOutput, this, [this] {
        // Its table's lines as they come: each candidate's tokens/s, then the best for the family.
        const QStringList lines = QString::fromUtf8(m_tune.readAllStandardOutput()).split(u'\n', Qt::SkipEmptyParts);
        if (!lines.isEmpty()) {
            m_progress = lines.last().trimmed();
            Q_EMIT changed();
        }
    });
    connect(&m_tune, &QProcess::finished, this, [this](int exitCode, QProcess::ExitStatus status) {
        // Its last words say why it failed; the status bar has room for one line.
        const QStringList said = QString::fromUtf8(m_tune.readAllStandardError()).split(u'\n', Qt::SkipEmptyParts);
        m_progress = status == QProcess::NormalExit && exitCode == 0
                         ? QString()
                         : tr("tuning failed: %1").arg(said.isEmpty() ? tr("exit %1").arg(exitCode) : said.last());
        refresh();
    });
    connect(&m_tune, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart) {
            m_progress = tr("tuning failed: cannot start %1").arg(m_optlog);
            Q_EMIT changed();
        }
    });
}

MachineTuning::~MachineTuning()
{
    for (QProcess *process : {&m_status, &m_tune})
        if (process->state() != QProcess::NotRunning) {
            process->disconnect(this); // what would hear of its end is being destroyed too
            process->kill();
            process->waitForFinished(2000);
        }
}

void MachineTuning::refresh()
{
    if (m_status.state() == QProcess::NotRunning)
        m_status.start(m_optlog, {QStringLiteral("tune"), QStringLiteral("--status")});
}

bool MachineTuning::tune(const QStringList &arguments)
{
    if (isTuning())
        return false;
    m_progress = tr("starting");
    m_tune.start(m_optlog, QStringList{QStringLiteral("tune")} + arguments);
    Q_EMIT changed();
    return true;
}

bool MachineTuning::fullyTuned() const
{
    if (m_families.isEmpty())
        return false;
    for (const QString &family : m_families)
        if (!family.contains(QStringLiteral("tuned by ") + QLatin1String(kMeasuredByTune)))
            return false;
    return true;
}

QString MachineTuning::summary() const
{
    if (isTuning())
        return tr("Tuning this machine (a few minutes; runs wait): %1").arg(m_progress);
    QString text = m_families.isEmpty() ? tr("Machine: tuning unknown") : tr("Machine: %1").arg(m_families.join(u"; "));
    if (!m_progress.isEmpty())
        text += QStringLiteral(" (%1)").arg(m_progress);
    return text;
}

} // namespace optlog
