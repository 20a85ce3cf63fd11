// SPDX-License-Identifier: MIT
#pragma once

#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>

namespace optlog {

// Acts on a study's runs on a cluster through the engine binary, as a person would from a shell:
// `optlog cancel STUDY RUN...` (scancel of their tasks) and `optlog gather STUDY`. They ask Slurm,
// which can take seconds, so they run as processes beside the window. One at a time.
class ClusterControl : public QObject
{
    Q_OBJECT
public:
    explicit ClusterControl(QString optlogBinary, QObject *parent = nullptr);
    ~ClusterControl() override;

    // Refused (false) while a command runs.
    bool cancel(const QString &study, const QStringList &runs);
    bool gather(const QString &study);
    bool isBusy() const { return m_command.state() != QProcess::NotRunning; }

Q_SIGNALS:
    // What the command said, its lines joined for the status bar; `ok` when it exited 0.
    void finished(const QString &said, bool ok);

private:
    bool start(const QStringList &arguments);

    QString m_optlog;
    QProcess m_command;
};

} // namespace optlog
