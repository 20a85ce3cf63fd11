// SPDX-License-Identifier: MIT
#pragma once

#include <QProcess>
#include <QString>
#include <QWidget>

class QComboBox;
class QLabel;

namespace optlog {

// "Run on": where the queue's runs train. This machine, or a host reached over SSH: the hosts the
// user named before (`optlog host check` remembers them), and "Add a host…", which asks for an SSH
// destination and checks it with the same `optlog host check`, a process beside the window (a slow
// or unreachable host never stalls it), before it is offered.
class RunPlaceChooser : public QWidget
{
    Q_OBJECT
public:
    explicit RunPlaceChooser(QString engineBinary, QWidget *parent = nullptr);

    // "" for this machine, else the SSH destination.
    QString host() const;
    // Checks `destination` and, once it answers, offers and chooses it; what the check said comes
    // with checked(). The "Add a host…" entry asks for the name and calls this.
    void addHost(const QString &destination);
    bool isChecking() const { return m_check.state() != QProcess::NotRunning; }

Q_SIGNALS:
    void hostChanged(const QString &host);
    // The check of a host ended: `ok` when it can train runs, with what `optlog host check` said.
    void checked(const QString &destination, bool ok, const QString &said);

private:
    void reloadHosts(const QString &choose);

    QString m_engine;
    QComboBox *m_places;
    QLabel *m_state;
    QProcess m_check;
    QString m_checking;
    QString m_previous; // chosen before "Add a host…"
};

} // namespace optlog
