// SPDX-License-Identifier: MIT
#pragma once

#include <QObject>
#include <QProcess>
#include <QString>

namespace optlog {

// Keeps a study's runs on other machines coming in while the workbench has it open: `optlog follow
// STUDY`, a process beside the window (all its SSH work off the GUI thread), which writes their
// rows into the study as they train there, reconnecting by itself when the connection drops. The
// window reads them from the study as it reads any run. A run the queue's own `optlog run --host`
// follows is left to it (one follower per run).
class HostFollower : public QObject
{
    Q_OBJECT
public:
    explicit HostFollower(QString optlogBinary, QObject *parent = nullptr);
    ~HostFollower() override; // stops following; the runs go on on their hosts

    // Follows the unfinished runs of `study` on other machines (none: the process says so and ends).
    void follow(const QString &study);
    void stop();
    bool isFollowing() const { return m_process.state() != QProcess::NotRunning; }

Q_SIGNALS:
    // A line for the status bar: which run on which host, a lost connection, a reconnection, an end.
    void said(const QString &line);
    void finished();

private:
    QString m_optlog;
    QProcess m_process;
    QByteArray m_stderr;
};

} // namespace optlog
