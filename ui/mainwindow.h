// SPDX-License-Identifier: MIT
#pragma once

#include <QMainWindow>
#include <QStringList>

#include <functional>

class QAction;
class QDockWidget;
class QMenu;
class QTabWidget;

namespace optlog {

class Store;
class CompareView;
class DesignerView;
class MonitorView;
class RunQueue;
class RunsView;
class RunTableModel;
class StudyWatcher;

// Assembles the views around one open study and wires them to the queue and the study watcher;
// the views themselves know nothing of each other.
class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    explicit MainWindow(const QString &engineBinary, QWidget *parent = nullptr);
    ~MainWindow() override;

    // Creates the study file when missing. False (after telling the user why) when the file is
    // not a usable study; the previously open study then stays open.
    bool openStudy(const QString &path);
    QString studyPath() const;
    // Queues the runs of a built-in or file study plan that the open study has not completed.
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
    void showPage(int page); // 0 Design, 1 Monitor, 2 Compare

    // Curation of the open study, on the runs selected in the Runs list. Each asks what it needs
    // (a name, a note, tags, a confirmation) in a dialog; a refusal is shown and changes nothing.
    QAction *renameAction() const { return m_renameRun; }
    QAction *noteAction() const { return m_editNote; }
    QAction *tagsAction() const { return m_editTags; }
    QAction *archiveAction() const { return m_archive; }
    QAction *deleteAction() const { return m_deleteRuns; }
    QAction *deriveAction() const { return m_derive; }
    // Copies finished runs of another study into the open one; false after saying why.
    bool importRuns(const QString &sourceStudy, const QList<qint64> &runIds);

protected:
    void closeEvent(QCloseEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;

private:
    void buildMenus();
    void fitRunsDock();
    void refreshRows();
    void refreshRecentMenu();
    void updateQueueStatus();
    void newStudy();
    void openStudyDialog();
    void compareSelected();
    void exportReport();
    void buildRunActions(QMenu *menu);
    // Opens the study for writing, applies `change`, refreshes; a StoreError is shown as `what`.
    bool changeStudy(const QString &what, const std::function<void(Store &)> &change);
    void renameSelected();
    void editNoteOfSelected();
    void editTagsOfSelected();
    void archiveSelected();
    void deleteSelected();
    void deriveFromSelected();
    void copySelectedToStudy();
    void importRunsDialog(const QString &sourceStudy);
    void saveFilterState();
    void restoreFilterState();

    StudyWatcher *m_watcher;
    RunQueue *m_queue;
    RunTableModel *m_model;
    RunsView *m_runs;
    DesignerView *m_designer;
    MonitorView *m_monitor;
    CompareView *m_compare;
    QTabWidget *m_pages;
    QDockWidget *m_runsDock = nullptr;
    // The width fitRunsDock() last gave the dock; -1 once the user or a saved layout chose one.
    int m_fittedDockWidth = 0;
    QMenu *m_recent = nullptr;
    QAction *m_start = nullptr;
    QAction *m_pause = nullptr;
    QAction *m_cancel = nullptr;
    QAction *m_renameRun = nullptr;
    QAction *m_editNote = nullptr;
    QAction *m_editTags = nullptr;
    QAction *m_archive = nullptr;
    QAction *m_deleteRuns = nullptr;
    QAction *m_derive = nullptr;
    QAction *m_copyTo = nullptr;
};

} // namespace optlog
