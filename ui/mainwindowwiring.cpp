// SPDX-License-Identifier: MIT
// The window's parts and how they answer each other: the pages and the runs dock, then each signal
// of the study watcher, the queue, the runs list and the places runs train elsewhere, and what the
// window does with it (MainWindow's constructor calls these in this order).
#include "ui/clustercontrol.h"
#include "ui/compareview.h"
#include "ui/curationcontroller.h"
#include "ui/designerview.h"
#include "ui/hostfollower.h"
#include "ui/machinetuning.h"
#include "ui/mainwindow.h"
#include "ui/memoryview.h"
#include "ui/monitorview.h"
#include "ui/runplacechooser.h"
#include "ui/runqueue.h"
#include "ui/runsview.h"
#include "ui/studywatcher.h"

#include <QDockWidget>
#include <QLabel>
#include <QPushButton>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>

namespace optlog {

void MainWindow::buildPages()
{
    m_pages->addTab(m_designer, tr("Design"));
    m_pages->addTab(m_monitor, tr("Monitor"));
    m_pages->addTab(m_compare, tr("Compare"));
    m_pages->addTab(m_memory, tr("Memory"));
    m_pages->setDocumentMode(true);
    setCentralWidget(m_pages);

    m_runsDock = new QDockWidget(tr("Runs"));
    m_runsDock->setObjectName(QStringLiteral("runsDock"));
    m_runsDock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    m_runsDock->setWidget(m_runs);
    addDockWidget(Qt::LeftDockWidgetArea, m_runsDock);
    m_runs->addBesideQueue(m_place);
}

void MainWindow::connectStudy()
{
    connect(m_watcher, &StudyWatcher::snapshotChanged, this, [this] {
        const StudySnapshot &snapshot = m_watcher->snapshot();
        if (!snapshot.error.empty())
            statusBar()->showMessage(tr("Cannot read the study: %1").arg(QString::fromStdString(snapshot.error)), 5000);
        refreshRows();
        m_compare->setStudy(snapshot);
        showSelectedTimelines();
        if (m_monitor->isLive()) {
            if (const RunSnapshotPtr run = snapshot.find(m_monitor->runId()))
                m_monitor->showRun(run, placeOf(snapshot, run->run().id));
        } else {
            followCurrentRow();
        }
        followRunsOnHosts(snapshot);
    });
}

void MainWindow::connectQueue()
{
    connect(m_queue, &RunQueue::entriesChanged, this, [this] {
        refreshRows();
        updateQueueStatus();
    });
    connect(m_queue, &RunQueue::activeChanged, this, &MainWindow::updateQueueStatus);
    connect(m_queue, &RunQueue::engineEvent, m_monitor, &MonitorView::handleEvent);
    connect(m_queue, &RunQueue::engineEvent, this, [this](const EngineEvent &event) {
        if (event.kind() != EventKind::Step)
            m_watcher->refresh(); // started, validation, finished: the table should know now
    });
    connect(m_queue, &RunQueue::runFinished, this,
            [this](const QString &name, const QString &outcome, const QString &message) {
                statusBar()->showMessage(message.isEmpty() ? tr("%1: %2").arg(name, outcome)
                                                           : tr("%1: %2 — %3").arg(name, outcome, message),
                                         10000);
                m_watcher->refresh();
                updateQueueStatus();
            });
    connect(m_designer, &DesignerView::runsRequested, this, [this](const QList<PlannedRun> &runs) {
        for (const auto &run : runs)
            m_queue->enqueue(run);
        statusBar()->showMessage(tr("Queued %n run(s); Run › Start (Ctrl+R) runs the queue", nullptr, int(runs.size())),
                                 5000);
    });
}

void MainWindow::connectRunsList()
{
    connect(m_runs, &RunsView::filterChanged, this, [this] {
        refreshRows();
        saveFilterState();
    });
    connect(m_runs, &RunsView::runsDropped, m_curation, &CurationController::importRuns);
    connect(m_runs, &RunsView::studyFileDropped, m_curation, &CurationController::importRunsDialog);
    connect(m_curation, &CurationController::runDerived, this, [this] { showPage(0); });
    connect(m_runs, &RunsView::addPresetsRequested, this, [this] { queuePlan(QStringLiteral("optimization-log")); });
    connect(m_runs, &RunsView::selectionChanged, this, &MainWindow::showSelectedTimelines);
    connect(m_runs, &RunsView::currentRunChanged, this, [this] {
        if (!m_monitor->isLive())
            followCurrentRow();
    });
}

// Where runs train besides here: a host's runs, followed; a cluster's tasks.
void MainWindow::connectElsewhere()
{
    connect(m_place, &RunPlaceChooser::placeChanged, m_queue, &RunQueue::setPlace);
    connect(m_queue, &RunQueue::submitted, this, [this](const QString &said) {
        statusBar()->showMessage(tr("Slurm: %1; the runs list shows the tasks").arg(said), 15000);
        m_watcher->refresh();
        m_watcher->refreshClusterStates();
    });
    connect(m_place, &RunPlaceChooser::checked, this, [this](const QString &host, bool ok, const QString &said) {
        statusBar()->showMessage(ok ? tr("%1 can train runs; the queue's next runs train there").arg(host)
                                    : tr("%1 cannot train runs: %2").arg(host, said),
                                 15000);
    });
    // A run on a host, followed: which run on which host, a lost connection, a reconnection.
    const auto followerSaid = [this](const QString &text) { statusBar()->showMessage(text, 30000); };
    connect(m_queue, &RunQueue::followerSaid, this, followerSaid);
    connect(m_followers, &HostFollower::said, this, followerSaid);
    connect(m_followers, &HostFollower::finished, m_watcher, &StudyWatcher::refresh);
    connect(m_cluster, &ClusterControl::finished, this, [this](const QString &said, bool ok) {
        statusBar()->showMessage(ok ? tr("Cluster: %1").arg(said) : tr("Cluster: failed: %1").arg(said), 15000);
        m_watcher->refreshClusterStates();
    });
}

// The window as it was left: its size, its docks, its page.
void MainWindow::restoreLayout()
{
    QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("geometry")).toByteArray());
    if (restoreState(settings.value(QStringLiteral("windowState")).toByteArray()))
        m_fittedDockWidth = -1;
    m_pages->setCurrentIndex(settings.value(QStringLiteral("page"), 0).toInt());
    if (!settings.contains(QStringLiteral("geometry")))
        resize(1280, 800);
    updateQueueStatus();
}

void MainWindow::buildTuningStatus()
{
    // Whether speeds measured here are the machine's best: tuned, probed by a first run, or not.
    m_tuningLabel = new QLabel;
    m_tuningLabel->setObjectName(QStringLiteral("tuningStatus"));
    m_tuneButton = new QPushButton(tr("Tune this machine…"));
    m_tuneButton->setObjectName(QStringLiteral("tuneButton"));
    m_tuneButton->setFlat(true);
    statusBar()->addPermanentWidget(m_tuningLabel);
    statusBar()->addPermanentWidget(m_tuneButton);
    connect(m_tuneButton, &QPushButton::clicked, this, &MainWindow::tuneMachine);
    connect(m_tuning, &MachineTuning::changed, this, &MainWindow::updateTuningStatus);
    // A run's first start on an untuned machine probes it first (under a minute): say so while the
    // Monitor waits, and show what the probe chose once it has.
    connect(m_queue, &RunQueue::launcherSaid, this, [this](const QString &line) {
        statusBar()->showMessage(line, 60000);
        m_tuning->refresh();
    });
    m_tuning->refresh();
    updateTuningStatus();
}

} // namespace optlog
