// SPDX-License-Identifier: MIT
#include "ui/mainwindow.h"

#include "core/analysis/planruns.h"
#include "core/analysis/report.h"
#include "core/config/cachefile.h"
#include "core/config/studyplan.h"
#include "core/store/store.h"
#include "ui/clustercontrol.h"
#include "ui/compareview.h"
#include "ui/curationcontroller.h"
#include "ui/designerview.h"
#include "ui/hostfollower.h"
#include "ui/machinetuning.h"
#include "ui/memoryview.h"
#include "ui/moduleprobe.h"
#include "ui/monitorview.h"
#include "ui/report/reportwriter.h"
#include "ui/runplacechooser.h"
#include "ui/runqueue.h"
#include "ui/runsview.h"
#include "ui/runtablemodel.h"
#include "ui/studywatcher.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QScopeGuard>
#include <QSet>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>

namespace optlog {

MainWindow::MainWindow(const QString &optlogBinary, QWidget *parent)
    : QMainWindow(parent)
    , m_watcher(new StudyWatcher(this))
    , m_queue(new RunQueue(optlogBinary, this))
    , m_model(new RunTableModel(this))
    , m_runs(new RunsView(m_model))
    , m_designer(new DesignerView(optlogBinary))
    , m_monitor(new MonitorView)
    , m_compare(new CompareView)
    , m_memory(new MemoryView)
    , m_curation(new CurationController(m_runs, m_watcher, m_designer, this))
    , m_tuning(new MachineTuning(optlogBinary, this))
    , m_cluster(new ClusterControl(optlogBinary, this))
    , m_place(new RunPlaceChooser(optlogBinary))
    , m_followers(new HostFollower(optlogBinary, this))
    , m_modules(new ModuleProbe(optlogBinary, this))
    , m_pages(new QTabWidget)
{
    setObjectName(QStringLiteral("optlogMainWindow"));
    buildPages();
    buildMenus();
    connectStudy();
    connectQueue();
    connectRunsList();
    connectElsewhere();
    restoreLayout();
    buildTuningStatus();
}

MainWindow::~MainWindow() = default;

void MainWindow::resizeEvent(QResizeEvent *event)
{
    QMainWindow::resizeEvent(event);
    fitRunsDock();
}

void MainWindow::fitRunsDock()
{
    // A dragged edge is the user's choice: keep it from then on.
    if (m_fittedDockWidth < 0 || (m_fittedDockWidth > 0 && qAbs(m_runsDock->width() - m_fittedDockWidth) > 2)) {
        m_fittedDockWidth = -1;
        return;
    }
    // The pages need about 1,100 px (the designer's form beside its memory table, Compare's table
    // beside its chart); the dock takes what the window has beyond that, from the run's name, state
    // and steps up to every column (validation loss, tokens/s and peak memory).
    const int narrowest = 350, pagesWidth = 1100;
    m_fittedDockWidth = qBound(narrowest, width() - pagesWidth, qMax(narrowest, m_runs->widthForAllColumns()));
    resizeDocks({m_runsDock}, {m_fittedDockWidth}, Qt::Horizontal);
}

void MainWindow::buildMenus()
{
    QMenu *file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&New study…"), QKeySequence::New, this, &MainWindow::newStudy);
    file->addAction(tr("&Open study…"), QKeySequence::Open, this, &MainWindow::openStudyDialog);
    m_recent = file->addMenu(tr("Open &recent"));
    file->addSeparator();
    file->addAction(tr("&Import runs from a study…"), m_curation, &CurationController::chooseStudyToImport);
    file->addAction(tr("&Export report…"), QKeySequence(Qt::CTRL | Qt::Key_E), this, &MainWindow::exportReport);
    file->addAction(tr("Add the &optimization-log presets"), this,
                    [this] { queuePlan(QStringLiteral("optimization-log")); });
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
    refreshRecentMenu();

    QMenu *run = menuBar()->addMenu(tr("&Run"));
    m_start = run->addAction(tr("&Start queue"), QKeySequence(Qt::CTRL | Qt::Key_R), m_queue, &RunQueue::start);
    m_pause = run->addAction(tr("&Pause queue (the running run finishes)"),
                             QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R), m_queue, &RunQueue::pause);
    m_cancel = run->addAction(tr("&Cancel running run"), QKeySequence(Qt::CTRL | Qt::Key_Period), m_queue,
                              &RunQueue::cancelRunning);
    run->addAction(tr("&Remove selected queued runs"), QKeySequence::Delete, this, [this] {
        for (int entry : m_runs->selectedQueueEntries())
            m_queue->remove(entry);
    });
    run->addSeparator();
    m_cancelCluster = run->addAction(tr("Cancel selected runs on the c&luster (scancel)"), this,
                                     &MainWindow::cancelSelectedClusterRuns);
    m_gather = run->addAction(tr("&Gather finished runs from the cluster"), this, [this] {
        if (m_cluster->gather(studyPath()))
            statusBar()->showMessage(tr("Gathering the runs that ended on the cluster…"));
    });
    // Beside "Run again with changes…" on the Runs list too: a host's run goes on where it stopped.
    m_resumeOnHost = run->addAction(tr("Resume the selected run on its &host"), this, &MainWindow::resumeSelectedOnHost);
    m_runs->table()->addAction(m_resumeOnHost);
    run->addSeparator();
    m_tune = run->addAction(tr("&Tune this machine…"), this, &MainWindow::tuneMachine);
    run->addSeparator();
    run->addAction(tr("&Compare selected runs"), QKeySequence(Qt::CTRL | Qt::Key_D), this, &MainWindow::compareSelected);

    m_curation->addActionsTo(menuBar()->addMenu(tr("&Edit")));

    QMenu *view = menuBar()->addMenu(tr("&View"));
    view->addAction(tr("&Design"), QKeySequence(Qt::CTRL | Qt::Key_1), this, [this] { showPage(0); });
    view->addAction(tr("&Monitor"), QKeySequence(Qt::CTRL | Qt::Key_2), this, [this] { showPage(1); });
    view->addAction(tr("C&ompare"), QKeySequence(Qt::CTRL | Qt::Key_3), this, [this] { showPage(2); });
    view->addAction(tr("M&emory"), QKeySequence(Qt::CTRL | Qt::Key_4), this, [this] { showPage(3); });
}

void MainWindow::showPage(int page)
{
    m_pages->setCurrentIndex(page);
}

int MainWindow::queuePlan(const QString &plan)
{
    PlanRuns runs;
    try {
        QApplication::setOverrideCursor(Qt::WaitCursor); // a TorchScript run's module is loaded by the engine
        const auto restoreCursor = qScopeGuard([] { QApplication::restoreOverrideCursor(); });
        runs = planRuns(loadStudyPlan(plan.toStdString()),
                        Store(studyPath().toStdString(), Store::Access::ReadOnly).runs(),
                        [this](const RunConfig &config) { m_modules->requireApplicable(config); });
    } catch (const std::exception &e) {
        QMessageBox::warning(this, tr("Cannot queue %1").arg(plan), QString::fromStdString(e.what()));
        return 0;
    }
    int queued = 0;
    for (const auto &run : runs.todo) {
        const QList<QueueEntry> entries = m_queue->entries();
        const bool pending = std::any_of(entries.begin(), entries.end(),
                                         [&run](const QueueEntry &e) { return e.run.name == run.name; });
        if (!pending) {
            m_queue->enqueue(run);
            ++queued;
        }
    }
    m_compare->setTolerance(runs.plan.tolerance);
    statusBar()->showMessage(tr("Queued %1 run(s) of %2; Run › Start (Ctrl+R) runs them").arg(queued).arg(plan), 8000);
    if (!runs.skipped.empty())
        showSkipped(plan, runs);
    return queued;
}

void MainWindow::showSkipped(const QString &plan, const PlanRuns &runs)
{
    QStringList lines;
    for (const auto &skipped : runs.skipped)
        lines << tr("%1: %2").arg(QString::fromStdString(skipped.name), QString::fromStdString(skipped.reason));
    for (const auto &note : runs.notes)
        lines << QString::fromStdString(note);
    // Not modal: the queue is usable while the reasons are read.
    auto *box = new QMessageBox(QMessageBox::Information, tr("Skipped runs of %1").arg(plan),
                                tr("%n run(s) of %1 cannot apply to this model and were not queued:", nullptr,
                                   int(runs.skipped.size()))
                                    .arg(plan),
                                QMessageBox::Ok, this);
    box->setObjectName(QStringLiteral("skippedRuns"));
    box->setInformativeText(lines.join(QStringLiteral("\n\n")));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setModal(false);
    box->show();
}

void MainWindow::followCurrentRow()
{
    const StudySnapshot &snapshot = m_watcher->snapshot();
    if (const QString task = m_runs->currentClusterTask(); !task.isEmpty()) {
        if (const ClusterTaskSnapshot *onCluster = snapshot.findClusterTask(task.toStdString()))
            m_monitor->showRun(onCluster->run, tr("on Slurm as job %1, from its shard").arg(task));
        return;
    }
    if (const RunSnapshotPtr run = snapshot.find(m_runs->currentRunId()))
        m_monitor->showRun(run, placeOf(snapshot, run->run().id));
}

QString MainWindow::placeOf(const StudySnapshot &snapshot, int64_t runId)
{
    const auto remote = snapshot.remoteHosts.find(runId);
    return remote == snapshot.remoteHosts.end()
               ? QString()
               : tr("on %1, followed over SSH").arg(QString::fromStdString(remote->second));
}

void MainWindow::followRunsOnHosts(const StudySnapshot &snapshot)
{
    // The queue's own `optlog run --host` follows the run it started; the others are followed
    // here, once the study has any still training (a run started before the workbench last closed).
    // A follower that ended with these same runs unfinished found them followed elsewhere (or its host
    // refused): it starts again only when the runs to follow change, not at every refresh.
    if (m_followers->isFollowing() || (m_queue->isRunning() && m_queue->runningPlace().kind == RunPlace::Kind::Host))
        return;
    QSet<qint64> unfinished;
    for (const auto &[runId, host] : snapshot.remoteHosts)
        if (const RunSnapshotPtr run = snapshot.find(runId); run && !run->isFinished())
            unfinished.insert(runId);
    if (unfinished.isEmpty() || unfinished == m_followedRuns)
        return;
    m_followedRuns = unfinished;
    m_followers->follow(QString::fromStdString(snapshot.path));
}

void MainWindow::resumeSelectedOnHost()
{
    const QList<qint64> ids = m_runs->selectedRunIds();
    const StudySnapshot &snapshot = m_watcher->snapshot();
    const RunSnapshotPtr selected = ids.size() == 1 ? snapshot.find(ids.front()) : nullptr;
    const auto host = selected ? snapshot.remoteHosts.find(selected->run().id) : snapshot.remoteHosts.end();
    if (host == snapshot.remoteHosts.end() || !selected->isFinished() || selected->run().outcome == Outcome::Completed) {
        statusBar()->showMessage(tr("Select one run that trained on a host and stopped before its end (cancelled, "
                                    "crashed or failed): it goes on there from its checkpoint"),
                                 8000);
        return;
    }
    PlannedRun resumed;
    resumed.name = selected->run().name;
    resumed.resume = std::to_string(selected->run().id);
    m_queue->enqueue(resumed);
    m_queue->start();
    statusBar()->showMessage(
        tr("Resuming %1 on %2…").arg(QString::fromStdString(resumed.name), QString::fromStdString(host->second)));
}

void MainWindow::cancelSelectedClusterRuns()
{
    const QStringList runs = m_runs->selectedClusterRuns();
    if (runs.isEmpty()) {
        statusBar()->showMessage(tr("Select the runs on the cluster to cancel: their state says \"queued\" or "
                                    "\"running\" with a Slurm job"),
                                 8000);
        return;
    }
    if (m_cluster->cancel(studyPath(), runs))
        statusBar()->showMessage(tr("Cancelling %1 on the cluster…").arg(runs.join(QStringLiteral(", "))));
}

void MainWindow::refreshRows()
{
    const StudySnapshot &snapshot = m_watcher->snapshot();
    QStringList groups;
    std::vector<RunRecord> recorded; // their config keys are words the filter knows
    for (const auto &run : snapshot.runs) {
        if (const QString group = QString::fromStdString(run->run().group); !groups.contains(group))
            groups << group;
        if (!run->summary.recorder.empty())
            recorded.push_back(run->run());
    }
    m_runs->setGroups(groups);
    m_runs->setRecordedKeys(recordedConfigKeys(recorded));
    m_model->setRows(runRows(snapshot, m_queue->entries(), m_runs->filter()));
    if (m_cancelCluster) {
        m_cancelCluster->setEnabled(!snapshot.clusterTasks.empty());
        m_gather->setEnabled(!snapshot.clusterTasks.empty());
    }
}

void MainWindow::updateQueueStatus()
{
    int queued = 0;
    for (const auto &entry : m_queue->entries())
        queued += entry.state == QueueEntry::State::Queued ? 1 : 0;
    QString text;
    if (m_queue->isRunning() && m_queue->runningPlace().kind == RunPlace::Kind::Slurm)
        text = tr("Handing the queue to Slurm…");
    else if (m_queue->isRunning())
        text = tr("Running one run; %1 queued after it. One run at a time keeps measurements clean.").arg(queued);
    else if (queued > 0)
        text = m_queue->isActive() ? tr("Starting…") : tr("%1 queued. Start the queue with Ctrl+R.").arg(queued);
    else
        text = tr("Queue empty.");
    m_runs->setQueueStatus(text);
    if (m_start) {
        // A tuning times runs of its own: the queue waits for it, and it for the queue.
        const bool tuning = m_tuning->isTuning();
        m_start->setEnabled(!m_queue->isActive() && queued > 0 && !tuning);
        m_pause->setEnabled(m_queue->isActive());
        m_cancel->setEnabled(m_queue->isRunning());
        m_tune->setEnabled(!m_queue->isActive() && !tuning);
        if (m_tuneButton)
            m_tuneButton->setEnabled(m_tune->isEnabled());
    }
}

void MainWindow::updateTuningStatus()
{
    const QString summary = m_tuning->summary();
    m_tuningLabel->setText(summary);
    m_tuningLabel->setToolTip(
        tr("Threads, the OpenMP wait policy and OpenBLAS's kernels change a run's speed as much as a technique "
           "does. Untuned, a run first makes a quick probe of under a minute; tuning measures them in rounds "
           "(docs/tuning.md)."));
    m_tuneButton->setVisible(!m_tuning->fullyTuned() && !m_tuning->isTuning());
    updateQueueStatus();
}

void MainWindow::tuneMachine()
{
    if (m_queue->isActive()) {
        statusBar()->showMessage(tr("Tuning waits for the queue: pause it or let it finish first"), 8000);
        return;
    }
    m_tuning->tune();
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    if (m_queue->isRunning()
        && QMessageBox::question(this, tr("A run is going"),
                                 tr("Closing the workbench cancels the running run (it keeps the steps it "
                                    "recorded). Close anyway?"))
               != QMessageBox::Yes) {
        event->ignore();
        return;
    }
    QSettings settings;
    settings.setValue(QStringLiteral("geometry"), saveGeometry());
    settings.setValue(QStringLiteral("windowState"), saveState());
    settings.setValue(QStringLiteral("page"), m_pages->currentIndex());
    event->accept();
}

} // namespace optlog
