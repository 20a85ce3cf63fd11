// SPDX-License-Identifier: MIT
#pragma once

#include <QMainWindow>
#include <QSet>
#include <QStringList>

class QAction;
class QDockWidget;
class QLabel;
class QPushButton;
class QMenu;
class QTabWidget;

namespace optlog {

class ClusterControl;
class CompareView;
class MemoryView;
class CurationController;
class DesignerView;
class HostFollower;
class MachineTuning;
class ModuleProbe;
class MonitorView;
struct PlanRuns;
class RunPlaceChooser;
class RunQueue;
class RunsView;
class RunTableModel;
class StudyWatcher;
struct StudySnapshot;

// Assembles the views around one open study and wires them to the queue, the study watcher and
// the curation controller; the views themselves know nothing of each other.
class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    explicit MainWindow(const QString &optlogBinary, QWidget *parent = nullptr);
    ~MainWindow() override;

    // Creates the study file when missing. False (after telling the user why) when the file is
    // not a usable study; the previously open study then stays open.
    bool openStudy(const QString &path);
    QString studyPath() const;
    // Queues the runs of a built-in or file study plan that the open study has not completed
    // (planRuns); the runs their module cannot take are skipped, and a dialog says why.
    int queuePlan(const QString &plan);
    static QString defaultStudyPath();
    // The runs ticked in Compare (else those selected in the table, else all) against Compare's
    // baseline and tolerance; the format follows the file's suffix. False after saying why.
    bool exportReportTo(const QString &path);

    RunQueue *queue() const { return m_queue; }
    StudyWatcher *watcher() const { return m_watcher; }
    RunTableModel *runModel() const { return m_model; }
    RunsView *runsView() const { return m_runs; }
    DesignerView *designer() const { return m_designer; }
    MonitorView *monitor() const { return m_monitor; }
    CompareView *compareView() const { return m_compare; }
    MemoryView *memoryView() const { return m_memory; }
    CurationController *curation() const { return m_curation; }
    MachineTuning *tuning() const { return m_tuning; }
    QAction *cancelClusterAction() const { return m_cancelCluster; }
    QAction *gatherAction() const { return m_gather; }
    QAction *resumeOnHostAction() const { return m_resumeOnHost; }
    void showPage(int page); // 0 Design, 1 Monitor, 2 Compare, 3 Memory

protected:
    void closeEvent(QCloseEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;

private:
    // The constructor's steps, in its order (mainwindowwiring.cpp; the menus in mainwindow.cpp).
    void buildPages();
    void buildMenus();
    void connectStudy();
    void connectQueue();
    void connectRunsList();
    void connectElsewhere();
    void restoreLayout();
    void buildTuningStatus();
    void fitRunsDock();
    void refreshRows();
    void refreshRecentMenu();
    void updateQueueStatus();
    void updateTuningStatus();
    void tuneMachine();
    void newStudy();
    void openStudyDialog();
    void compareSelected();
    void exportReport();
    void saveFilterState();
    void restoreFilterState();
    // The Monitor shows the current row's run, from the study or from a cluster task's shard,
    // unless the queue's run streams live.
    // "on gpu-box, followed over SSH" for a run on another machine; empty for one here.
    QString placeOf(const StudySnapshot &snapshot, int64_t runId);
    void followRunsOnHosts(const StudySnapshot &snapshot);
    void followCurrentRow();
    void showSelectedTimelines(); // on the Memory page: the runs selected in the Runs list
    void showSkipped(const QString &plan, const PlanRuns &runs);
    void cancelSelectedClusterRuns();
    // The selected run, when it trained on a host and stopped, queued to go on there (`optlog run
    // --resume`): followed here as the queue follows a run it started there.
    void resumeSelectedOnHost();

    StudyWatcher *m_watcher;
    RunQueue *m_queue;
    RunTableModel *m_model;
    RunsView *m_runs;
    DesignerView *m_designer;
    MonitorView *m_monitor;
    CompareView *m_compare;
    MemoryView *m_memory;
    CurationController *m_curation;
    MachineTuning *m_tuning;
    ClusterControl *m_cluster;
    RunPlaceChooser *m_place;    // where the queue's runs train
    HostFollower *m_followers;   // the study's runs on other machines that the queue does not follow
    QSet<qint64> m_followedRuns; // the unfinished runs on hosts it was last started for
    ModuleProbe *m_modules;      // asks the engine whether a plan's TorchScript runs apply to their module
    QTabWidget *m_pages;
    QDockWidget *m_runsDock = nullptr;
    // The width fitRunsDock() last gave the dock; -1 once the user or a saved layout chose one.
    int m_fittedDockWidth = 0;
    QMenu *m_recent = nullptr;
    QAction *m_start = nullptr;
    QAction *m_pause = nullptr;
    QAction *m_cancel = nullptr;
    QAction *m_tune = nullptr;
    QAction *m_cancelCluster = nullptr;
    QAction *m_gather = nullptr;
    QAction *m_resumeOnHost = nullptr;
    QLabel *m_tuningLabel = nullptr;
    QPushButton *m_tuneButton = nullptr;
};

} // namespace optlog
