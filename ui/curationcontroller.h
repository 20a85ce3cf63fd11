// SPDX-License-Identifier: MIT
#pragma once

#include <QList>
#include <QObject>
#include <QString>
#include <functional>
#include <optional>

class QAction;
class QMainWindow;
class QMenu;

namespace optlog {

class DesignerView;
class RunsView;
class Store;
class StudyWatcher;
struct RunRecord;

// Curation of the open study (the watcher's), on the runs selected in the Runs list: rename,
// note, tags, archive, delete, run again with changes, copy to and import from another study.
// Each action asks what it needs (a name, a note, tags, a confirmation) in a dialog over the
// window; a refusal is shown and changes nothing. Its actions are also the Runs list's context menu.
class CurationController : public QObject
{
    Q_OBJECT
public:
    // `window` is the dialogs' parent and its status bar says what was done.
    CurationController(RunsView *runs, StudyWatcher *watcher, DesignerView *designer, QMainWindow *window);

    // Puts the actions in `menu` (the window's Edit menu).
    void addActionsTo(QMenu *menu) const;
    QAction *renameAction() const { return m_rename; }
    QAction *noteAction() const { return m_editNote; }
    QAction *deleteAction() const { return m_delete; }
    QAction *deriveAction() const { return m_derive; }

    // Copies finished runs of another study into the open one; false after saying why.
    bool importRuns(const QString &sourceStudy, const QList<qint64> &runIds);
    // Lets the user tick which finished runs of `sourceStudy` to import.
    void importRunsDialog(const QString &sourceStudy);
    // Asks for the study to import from, then which of its runs.
    void chooseStudyToImport();

Q_SIGNALS:
    // The designer now holds a run to run again with changes: the Design page should show.
    void runDerived();

private:
    QString studyPath() const;
    using StudyChange = std::function<void(Store &)>;
    // Opens the study for writing, applies `change`, refreshes; a StoreError is shown as `what`.
    bool changeStudy(const QString &what, const StudyChange &change);
    // The run the user acts on, asked about: `ask` shows a dialog over the window for the run, which
    // it calls `named` ("run 3 (fp32)"), and returns the change to make, or nothing when the user
    // cancelled or changed nothing. The change is made as changeStudy makes it.
    using RunQuestion = std::function<std::optional<StudyChange>(const RunRecord &run, const QString &named)>;
    void changeActedOnRun(const QString &what, const RunQuestion &ask);
    void renameSelected();
    void editNoteOfSelected();
    void editTagsOfSelected();
    void archiveSelected();
    void deleteSelected();
    void deriveFromSelected();
    void copySelectedToStudy();

    RunsView *m_runs;
    StudyWatcher *m_watcher;
    DesignerView *m_designer;
    QMainWindow *m_window;
    QAction *m_rename;
    QAction *m_editNote;
    QAction *m_editTags;
    QAction *m_archive;
    QAction *m_delete;
    QAction *m_derive;
    QAction *m_copyTo;
};

} // namespace optlog
