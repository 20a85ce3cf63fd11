// SPDX-License-Identifier: MIT
#include "ui/clustercontrol.h"

#include <utility>

namespace optlog {

ClusterControl::ClusterControl(QString optlogBinary, QObject *parent)
    : QObject(parent)
    , m_optlog(std::move(optlogBinary))
{
    connect(&m_command, &QProcess::finished, this, [this](int exitCode, QProcess::ExitStatus status) {
        // "optlog cancel: cancelled long (job 27 task 1, was RUNNING)": the program's name is noise here.
        QStringList lines;
        for (QString line : QString::fromUtf8(m_command.readAllStandardError()).split(u'\n', Qt::SkipEmptyParts)) {
            if (const qsizetype colon = line.indexOf(QStringLiteral(": ")); line.startsWith(u"optlog ") && colon > 0)
                line = line.mid(colon + 2);
            lines << line.trimmed();
        }
        const bool ok = status == QProcess::NormalExit && exitCode == 0;
        Q_EMIT finished(lines.isEmpty() ? (ok ? tr("done") : tr("exit %1").arg(exitCode)) : lines.join(u"; "), ok);
    });
    connect(&m_command, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart)
            Q_EMIT finished(tr("cannot start %1").arg(m_optlog), false);
    });
}

ClusterControl::~ClusterControl()
{
    if (isBusy()) {
        m_command.disconnect(this);      // what would hear of its end is being destroyed too
        m_command.waitForFinished(5000); // a cancel half done would leave the user unsure what stopped
        m_command.kill();
        m_command.waitForFinished(1000);
    }
}

bool ClusterControl::cancel(const QString &study, const QStringList &runs)
{
    return !runs.isEmpty() && start(QStringList{QStringLiteral("cancel"), study} + runs);
}

bool ClusterControl::gather(const QString &study)
{
    return start({QStringLiteral("gather"), study});
}

bool ClusterControl::start(const QStringList &arguments)
{
    if (isBusy())
        return false;
    m_command.start(m_optlog, arguments);
    return true;
}

} // namespace optlog
