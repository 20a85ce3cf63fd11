// SPDX-License-Identifier: MIT
#pragma once

#include "ui/runplace.h"

#include <QProcess>
#include <QString>
#include <QWidget>

class QComboBox;
class QLabel;

namespace optlog {

// "Run on": where the queue's runs train. This machine, where optlog-engine is installed (without
// it, the `optlog` package alone, it is shown but not offered); a Slurm cluster, offered where `sbatch` is
// on the PATH (this machine is then one that submits to it, its studies on the cluster's shared
// disk); or a host reached over SSH: the hosts the user named before (`optlog host check`
// remembers them), and "Add a host…", which asks for an SSH destination (and the Python there, to
// install optlog into its environment first: `optlog host setup`) and checks it with the same
// `optlog host check`, a process beside the window (a slow or unreachable host never stalls it),
// before it is offered.
class RunPlaceChooser : public QWidget
{
    Q_OBJECT
public:
    explicit RunPlaceChooser(QString optlogBinary, QWidget *parent = nullptr);

    RunPlace place() const;
    // Chooses `place` where it is offered (a remembered host, Slurm where sbatch is, this machine
    // where its engine is); false if not.
    bool choose(const RunPlace &place);
    // Checks `destination` (after installing optlog there into the environment of `python`, where
    // one is named) and, once it answers, offers and chooses it; what it said comes with checked().
    // The "Add a host…" entry asks for both and calls this.
    void addHost(const QString &destination, const QString &python = {});
    bool isChecking() const { return m_check.state() != QProcess::NotRunning; }

Q_SIGNALS:
    void placeChanged(const optlog::RunPlace &place);
    // The check of a host ended: `ok` when it can train runs, with what `optlog host check` said.
    void checked(const QString &destination, bool ok, const QString &said);

private:
    void reloadPlaces(const RunPlace &choose);

    QString m_optlog;
    QComboBox *m_places;
    QLabel *m_state;
    QProcess m_check;
    QString m_checking;
    RunPlace m_previous; // chosen before "Add a host…"
};

} // namespace optlog
