// SPDX-License-Identifier: MIT
#include "ui/hostfollower.h"

#include "core/remote/hostprotocol.h"

namespace optlog {

HostFollower::HostFollower(QString optlogBinary, QObject *parent)
    : QObject(parent)
    , m_optlog(std::move(optlogBinary))
{
    connect(&m_process, &QProcess::readyReadStandardError, this, [this] {
        m_stderr += m_process.readAllStandardError();
        qsizetype newline;
        while ((newline = m_stderr.indexOf('\n')) >= 0) {
            const QString line = QString::fromUtf8(m_stderr.left(newline)).trimmed();
            m_stderr.remove(0, newline + 1);
            if (!line.isEmpty())
                Q_EMIT said(QString::fromStdString(followerText(line.toStdString()).value_or(line.toStdString())));
        }
    });
    connect(&m_process, &QProcess::finished, this, &HostFollower::finished);
}

HostFollower::~HostFollower()
{
    m_process.disconnect(this);
    stop();
}

void HostFollower::follow(const QString &study)
{
    stop();
    m_stderr.clear();
    m_process.start(m_optlog, {QStringLiteral("follow"), study});
}

void HostFollower::stop()
{
    if (!isFollowing())
        return;
    m_process.terminate(); // stops following at once; the runs go on there
    if (!m_process.waitForFinished(3000))
        m_process.kill();
    m_process.waitForFinished(1000);
}

} // namespace optlog
