// SPDX-License-Identifier: MIT
#include "ui/studywatcher.h"

#include "core/cluster/statepoll.h"

#include <QtConcurrent/QtConcurrentRun>

namespace optlog {

StudyWatcher::StudyWatcher(QObject *parent)
    : QObject(parent)
    , m_clusterStates(std::make_shared<TaskStatePoll>())
{
    m_timer.setInterval(1000);
    connect(&m_timer, &QTimer::timeout, this, &StudyWatcher::refresh);
    connect(&m_load, &QFutureWatcher<StudySnapshot>::finished, this, &StudyWatcher::onLoaded);
}

void StudyWatcher::refreshClusterStates()
{
    m_clusterStates->forget();
    refresh();
}

void StudyWatcher::setPath(const QString &path)
{
    m_path = path;
    m_snapshot = StudySnapshot{};
    m_snapshot.path = path.toStdString();
    Q_EMIT snapshotChanged();
    if (path.isEmpty()) {
        m_timer.stop();
        return;
    }
    m_timer.start();
    refresh();
}

void StudyWatcher::refresh()
{
    if (m_path.isEmpty())
        return;
    if (m_load.isRunning()) {
        m_refreshAgain = true; // the running read may predate the change that asked for this one
        return;
    }
    std::map<int64_t, RunSnapshotPtr> cache;
    for (const auto &run : m_snapshot.runs)
        cache[run->run().id] = run;
    m_load.setFuture(QtConcurrent::run([path = m_path.toStdString(), cache = std::move(cache), poll = m_clusterStates] {
        return loadStudySnapshot(path, cache,
                                 [&poll](const std::string &job, int64_t tasks) { return poll->statesOf(job, tasks); });
    }));
}

void StudyWatcher::onLoaded()
{
    StudySnapshot loaded = m_load.result();
    if (QString::fromStdString(loaded.path) == m_path) { // a study switched meanwhile is dropped
        m_snapshot = std::move(loaded);
        Q_EMIT snapshotChanged();
    }
    if (m_refreshAgain) {
        m_refreshAgain = false;
        refresh();
    }
}

} // namespace optlog
