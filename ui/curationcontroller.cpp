// SPDX-License-Identifier: MIT
#include "ui/curationcontroller.h"

#include "core/analysis/runtext.h"
#include "core/store/curation.h"
#include "core/store/store.h"
#include "ui/designerview.h"
#include "ui/runsview.h"
#include "ui/studywatcher.h"

#include <QAction>
#include <QCoreApplication>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMainWindow>
#include <QMenu>
#include <QMessageBox>
#include <QStatusBar>
#include <QTableView>
#include <QVBoxLayout>

namespace optlog {

namespace {
// The run the user acts on: the current row's, else the first selected. Null when none is a run.
RunSnapshotPtr actedOn(const RunsView *runs, const StudySnapshot &snapshot)
{
    if (const RunSnapshotPtr current = snapshot.find(runs->currentRunId()))
        return current;
    const QList<qint64> selected = runs->selectedRunIds();
    return selected.isEmpty() ? nullptr : snapshot.find(selected.first());
}

// What a dialog calls a run: "run 3 (fp32)".
QString namedRun(const RunRecord &run)
{
    return QCoreApplication::translate("optlog::CurationController", "run %1 (%2)")
        .arg(run.id)
        .arg(QString::fromStdString(run.name));
}
} // namespace

CurationController::CurationController(RunsView *runs, StudyWatcher *watcher, DesignerView *designer,
                                       QMainWindow *window)
    : QObject(window)
    , m_runs(runs)
    , m_watcher(watcher)
    , m_designer(designer)
    , m_window(window)
{
    const auto action = [this](const QString &text, const QKeySequence &shortcut, void (CurationController::*act)()) {
        auto *a = new QAction(text, this);
        a->setShortcut(shortcut);
        connect(a, &QAction::triggered, this, act);
        return a;
    };
    m_rename = action(tr("&Rename run…"), QKeySequence(Qt::Key_F2), &CurationController::renameSelected);
    m_editNote = action(tr("Edit &note…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_N),
                        &CurationController::editNoteOfSelected);
    m_editTags = action(tr("Edit &tags…"), QKeySequence(Qt::CTRL | Qt::Key_T), &CurationController::editTagsOfSelected);
    m_archive = action(tr("&Archive or bring back"), QKeySequence(), &CurationController::archiveSelected);
    m_delete = action(tr("&Delete runs…"), QKeySequence(Qt::SHIFT | Qt::Key_Delete),
                      &CurationController::deleteSelected);
    m_derive = action(tr("Run &again with changes…"), QKeySequence(), &CurationController::deriveFromSelected);
    m_copyTo = action(tr("&Copy runs to another study…"), QKeySequence(), &CurationController::copySelectedToStudy);
    // The same actions on the Runs list's context menu.
    QTableView *table = m_runs->table();
    table->setContextMenuPolicy(Qt::ActionsContextMenu);
    table->addActions({m_rename, m_editNote, m_editTags, m_archive, m_delete, m_derive, m_copyTo});
}

void CurationController::addActionsTo(QMenu *menu) const
{
    menu->addActions({m_rename, m_editNote, m_editTags, m_archive, m_delete});
    menu->addSeparator();
    menu->addActions({m_derive, m_copyTo});
}

QString CurationController::studyPath() const
{
    return m_watcher->path();
}

bool CurationController::changeStudy(const QString &what, const StudyChange &change)
{
    try {
        Store store(studyPath().toStdString(), Store::Access::ReadWrite);
        change(store);
    } catch (const std::exception &e) {
        QMessageBox::warning(m_window, what, tr("%1\n\nNothing was changed.").arg(QString::fromStdString(e.what())));
        return false;
    }
    m_watcher->refresh();
    return true;
}

void CurationController::changeActedOnRun(const QString &what, const RunQuestion &ask)
{
    const RunSnapshotPtr run = actedOn(m_runs, m_watcher->snapshot());
    if (!run)
        return;
    if (const std::optional<StudyChange> change = ask(run->run(), namedRun(run->run())))
        changeStudy(what, *change);
}

void CurationController::renameSelected()
{
    changeActedOnRun(tr("Cannot rename the run"),
                     [this](const RunRecord &run, const QString &named) -> std::optional<StudyChange> {
                         const QString old = QString::fromStdString(run.name);
                         bool ok = false;
                         const QString name
                             = QInputDialog::getText(m_window, tr("Rename run"),
                                                     tr("New name of %1; the old name stays searchable:").arg(named),
                                                     QLineEdit::Normal, old, &ok);
                         if (!ok || name == old)
                             return std::nullopt;
                         return [id = run.id, name = name.toStdString()](Store &store) { renameRun(store, id, name); };
                     });
}

void CurationController::editNoteOfSelected()
{
    changeActedOnRun(tr("Cannot store the note"),
                     [this](const RunRecord &run, const QString &named) -> std::optional<StudyChange> {
                         bool ok = false;
                         const QString note = QInputDialog::getMultiLineText(
                             m_window, tr("Note"),
                             tr("Note on %1, shown as text in Runs, Compare and reports; empty removes it:").arg(named),
                             QString::fromStdString(run.note), &ok);
                         if (!ok)
                             return std::nullopt;
                         return [id = run.id, note = note.toStdString()](Store &store) { setNote(store, id, note); };
                     });
}

void CurationController::editTagsOfSelected()
{
    changeActedOnRun(tr("Cannot store the tags"),
                     [this](const RunRecord &run, const QString &named) -> std::optional<StudyChange> {
                         QStringList before;
                         for (const auto &tag : run.tags)
                             before << QString::fromStdString(tag);
                         bool ok = false;
                         const QString text = QInputDialog::getText(m_window, tr("Tags"),
                                                                    tr("Tags of %1, separated by spaces:").arg(named),
                                                                    QLineEdit::Normal, before.join(QLatin1Char(' ')),
                                                                    &ok);
                         if (!ok)
                             return std::nullopt;
                         const QStringList after = text.split(QLatin1Char(' '), Qt::SkipEmptyParts);
                         std::vector<std::string> add, remove;
                         for (const QString &tag : after)
                             if (!before.contains(tag))
                                 add.push_back(tag.toStdString());
                         for (const QString &tag : before)
                             if (!after.contains(tag))
                                 remove.push_back(tag.toStdString());
                         return [id = run.id, add, remove](Store &store) { changeTags(store, id, add, remove); };
                     });
}

void CurationController::archiveSelected()
{
    const QList<qint64> ids = m_runs->selectedRunIds();
    const StudySnapshot &snapshot = m_watcher->snapshot();
    changeStudy(tr("Cannot archive"), [&](Store &store) {
        for (const qint64 id : ids)
            if (const RunSnapshotPtr run = snapshot.find(id))
                setArchived(store, id, !run->run().archived); // archived ones come back
    });
}

void CurationController::deleteSelected()
{
    const QList<qint64> ids = m_runs->selectedRunIds();
    if (ids.isEmpty())
        return;
    QStringList names;
    for (const qint64 id : ids)
        if (const RunSnapshotPtr run = m_watcher->snapshot().find(id))
            names << QStringLiteral("%1 (%2)").arg(id).arg(QString::fromStdString(run->run().name));
    const auto answer = QMessageBox::question(
        m_window, tr("Delete runs"),
        tr("Delete run %1 and every row of it (metrics, validation, memory, events)? This cannot be undone; "
           "Archive hides a run instead.")
            .arg(names.join(QStringLiteral(", "))),
        QMessageBox::Yes | QMessageBox::No, QMessageBox::No);
    if (answer != QMessageBox::Yes)
        return;
    changeStudy(tr("Cannot delete"), [&](Store &store) {
        for (const qint64 id : ids)
            store.requireRun(id); // all still there before the first goes
        for (const qint64 id : ids)
            deleteRun(store, id);
    });
}

void CurationController::deriveFromSelected()
{
    const RunSnapshotPtr run = actedOn(m_runs, m_watcher->snapshot());
    if (!run)
        return;
    std::vector<RunRecord> existing;
    for (const auto &r : m_watcher->snapshot().runs)
        existing.push_back(r->run());
    const RunRecord &record = run->run();
    try {
        m_designer->deriveFrom(QStringLiteral("%1:%2").arg(studyPath()).arg(record.id), record.configToml,
                               namedRun(record), QString::fromStdString(derivedRunName(record.name, existing)));
    } catch (const std::exception &e) {
        QMessageBox::warning(m_window, tr("Cannot run it again"),
                             tr("This optlog cannot read the run's stored config: %1")
                                 .arg(QString::fromStdString(e.what())));
        return;
    }
    Q_EMIT runDerived();
}

void CurationController::copySelectedToStudy()
{
    const QList<qint64> ids = m_runs->selectedRunIds();
    if (ids.isEmpty())
        return;
    const QString destination = QFileDialog::getSaveFileName(m_window, tr("Copy runs to study"),
                                                             QFileInfo(studyPath()).absolutePath(),
                                                             tr("optlog studies (*.sqlite)"), nullptr,
                                                             QFileDialog::DontConfirmOverwrite);
    if (destination.isEmpty())
        return;
    try {
        const Store source(studyPath().toStdString(), Store::Access::ReadOnly);
        copyRunsInto(source, std::vector<int64_t>(ids.begin(), ids.end()), destination.toStdString());
    } catch (const std::exception &e) {
        QMessageBox::warning(m_window, tr("Cannot copy the runs"), QString::fromStdString(e.what()));
        return;
    }
    m_window->statusBar()->showMessage(tr("Copied %n run(s) to %1", nullptr, int(ids.size())).arg(destination), 8000);
}

bool CurationController::importRuns(const QString &sourceStudy, const QList<qint64> &runIds)
{
    std::vector<int64_t> ids(runIds.begin(), runIds.end());
    size_t copied = 0;
    const bool ok = changeStudy(tr("Cannot import the runs"), [&](Store &store) {
        const Store source(sourceStudy.toStdString(), Store::Access::ReadOnly);
        copied = copyRunsFrom(store, source, ids).size();
        if (source.studySeed() != store.studySeed())
            m_window->statusBar()->showMessage(tr("Imported runs were validated on other windows (study seed %1, this "
                                                  "study %2); their verdicts say so")
                                                   .arg(source.studySeed())
                                                   .arg(store.studySeed()),
                                               10000);
    });
    if (ok && m_window->statusBar()->currentMessage().isEmpty())
        m_window->statusBar()->showMessage(tr("Imported %n run(s) from %1", nullptr, int(copied)).arg(sourceStudy),
                                           8000);
    return ok;
}

void CurationController::importRunsDialog(const QString &sourceStudy)
{
    std::vector<RunRecord> runs;
    try {
        runs = Store(sourceStudy.toStdString(), Store::Access::ReadOnly).runs();
    } catch (const std::exception &e) {
        QMessageBox::warning(m_window, tr("Cannot import runs"), QString::fromStdString(e.what()));
        return;
    }
    QDialog dialog(m_window);
    dialog.setWindowTitle(tr("Import runs from %1").arg(QFileInfo(sourceStudy).fileName()));
    auto *list = new QListWidget;
    for (const auto &run : runs) {
        if (!run.isFinished())
            continue; // a running run is copied when it has finished
        auto *item = new QListWidgetItem(QStringLiteral("%1  %2  (%3)")
                                             .arg(run.id)
                                             .arg(QString::fromStdString(run.name),
                                                  QString::fromLatin1(outcomeName(run.outcome))),
                                         list);
        item->setData(Qt::UserRole, qint64(run.id));
        item->setFlags(Qt::ItemIsUserCheckable | Qt::ItemIsEnabled);
        item->setCheckState(run.archived ? Qt::Unchecked : Qt::Checked);
    }
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    auto *layout = new QVBoxLayout(&dialog);
    layout->addWidget(new QLabel(
        tr("Runs to copy into this study, with every row; %1 is not changed:").arg(QFileInfo(sourceStudy).fileName())));
    layout->addWidget(list);
    layout->addWidget(buttons);
    if (dialog.exec() != QDialog::Accepted)
        return;
    QList<qint64> ids;
    for (int i = 0; i < list->count(); ++i)
        if (list->item(i)->checkState() == Qt::Checked)
            ids << list->item(i)->data(Qt::UserRole).toLongLong();
    if (!ids.isEmpty())
        importRuns(sourceStudy, ids);
}

void CurationController::chooseStudyToImport()
{
    const QString path = QFileDialog::getOpenFileName(m_window, tr("Import runs from"),
                                                      QFileInfo(studyPath()).absolutePath(),
                                                      tr("optlog studies (*.sqlite);;All files (*)"));
    if (!path.isEmpty())
        importRunsDialog(path);
}

} // namespace optlog
