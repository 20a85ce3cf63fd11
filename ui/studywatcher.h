// SPDX-License-Identifier: MIT
#pragma once

#include "ui/studysnapshot.h"

#include <QFutureWatcher>
#include <QObject>
#include <QString>
#include <QTimer>
#include <memory>

namespace optlog {

class TaskStatePoll;

// Re-reads the open study about once per second on a worker thread, so the GUI thread never
// waits on SQLite, and hands each complete snapshot to the GUI thread. A study with runs on a
// cluster also asks the scheduler how their tasks stand, a few times a minute.
class StudyWatcher : public QObject
{
    Q_OBJECT
public:
    explicit StudyWatcher(QObject *parent = nullptr);

    void setPath(const QString &path); // empty: no study
    QString path() const { return m_path; }
    void setInterval(int milliseconds) { m_timer.setInterval(milliseconds); }
    // Asks for a read now (coalesced with one already in flight).
    void refresh();
    const StudySnapshot &snapshot() const { return m_snapshot; }
    // The next read asks the scheduler again rather than use its last answer (after a cancel).
    void refreshClusterStates();

Q_SIGNALS:
    void snapshotChanged();

private:
    void onLoaded();

    QString m_path;
    QTimer m_timer;
    QFutureWatcher<StudySnapshot> m_load;
    bool m_refreshAgain = false;
    StudySnapshot m_snapshot;
    std::shared_ptr<TaskStatePoll> m_clusterStates; // shared with the read in flight
};

} // namespace optlog
