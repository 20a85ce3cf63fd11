// SPDX-License-Identifier: MIT
// The main window's study: opening one (new, from a dialog, from the recent list), the Runs
// list's filter remembered for it, and its report written to a file.
#include "core/analysis/report.h"
#include "core/config/cachefile.h"
#include "core/store/store.h"
#include "ui/compareview.h"
#include "ui/hostfollower.h"
#include "ui/mainwindow.h"
#include "ui/memoryview.h"
#include "ui/report/reportwriter.h"
#include "ui/runqueue.h"
#include "ui/runsview.h"
#include "ui/studywatcher.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QSettings>
#include <QStatusBar>

namespace optlog {

namespace {
constexpr int kMaxRecent = 8;
const QString kRecentKey = QStringLiteral("recentStudies");
} // namespace

QString MainWindow::defaultStudyPath()
{
    // Where `optlog run` and `optlog study` put a study when none is named: one folder for both.
    return QString::fromStdString(studyFilePath("default.sqlite"));
}

bool MainWindow::openStudy(const QString &path)
{
    if (m_queue->isRunning()) {
        QMessageBox::information(this, tr("A run is going"),
                                 tr("Cancel the running run or let it finish before switching studies."));
        return false;
    }
    try {
        // Opening for writing creates or migrates the file and marks runs whose engine is gone.
        Store store(path.toStdString(), Store::Access::ReadWrite);
    } catch (const std::exception &e) {
        QMessageBox::warning(this, tr("Cannot open the study"),
                             tr("%1\n\nNothing in the file was changed.").arg(QString::fromStdString(e.what())));
        return false;
    }
    const QString absolute = QFileInfo(path).absoluteFilePath();
    m_followers->stop(); // the old study's runs go on on their hosts
    m_followedRuns.clear();
    m_queue->setStudy(absolute);
    m_watcher->setPath(absolute);
    m_runs->setStudyPath(absolute);
    restoreFilterState();
    setWindowTitle(tr("%1 — optlog").arg(QFileInfo(absolute).fileName()));
    QSettings settings;
    QStringList recent = settings.value(kRecentKey).toStringList();
    recent.removeAll(absolute);
    recent.prepend(absolute);
    settings.setValue(kRecentKey, recent.mid(0, kMaxRecent));
    refreshRecentMenu();
    return true;
}

QString MainWindow::studyPath() const
{
    return m_watcher->path();
}

namespace {
// The Runs list's filter is remembered per study, by the study's absolute path.
QString filterKey(const QString &study)
{
    return QStringLiteral("runsFilter/") + QString::fromLatin1(study.toUtf8().toBase64(QByteArray::Base64UrlEncoding));
}
} // namespace

void MainWindow::saveFilterState()
{
    if (studyPath().isEmpty())
        return;
    const RunsView::FilterState state = m_runs->filterState();
    QSettings().setValue(filterKey(studyPath()), QVariantMap{{QStringLiteral("text"), state.text},
                                                             {QStringLiteral("outcome"), state.outcome},
                                                             {QStringLiteral("group"), state.group},
                                                             {QStringLiteral("archived"), state.showArchived}});
}

void MainWindow::restoreFilterState()
{
    const QVariantMap saved = QSettings().value(filterKey(studyPath())).toMap();
    m_runs->setFilterState(
        {saved.value(QStringLiteral("text")).toString(), saved.value(QStringLiteral("outcome")).toString(),
         saved.value(QStringLiteral("group")).toString(), saved.value(QStringLiteral("archived")).toBool()});
}

void MainWindow::refreshRecentMenu()
{
    m_recent->clear();
    const QStringList recent = QSettings().value(kRecentKey).toStringList();
    for (const QString &path : recent)
        m_recent->addAction(QFileInfo(path).fileName() + QStringLiteral("  —  ") + QFileInfo(path).absolutePath(), this,
                            [this, path] { openStudy(path); });
    m_recent->setEnabled(!recent.isEmpty());
}

void MainWindow::newStudy()
{
    const QString path = QFileDialog::getSaveFileName(this, tr("New study"), QDir::homePath(),
                                                      tr("optlog studies (*.sqlite)"));
    if (!path.isEmpty())
        openStudy(path.endsWith(QLatin1String(".sqlite")) ? path : path + QStringLiteral(".sqlite"));
}

void MainWindow::openStudyDialog()
{
    const QString path = QFileDialog::getOpenFileName(this, tr("Open study"), QFileInfo(studyPath()).absolutePath(),
                                                      tr("optlog studies (*.sqlite);;All files (*)"));
    if (!path.isEmpty())
        openStudy(path);
}

bool MainWindow::exportReportTo(const QString &path)
{
    QList<qint64> runs = m_compare->selectedRuns();
    if (runs.isEmpty()) // nothing picked in Compare: the runs selected in the table, else all
        runs = m_runs->selectedRunIds();
    std::vector<std::string> selectors;
    for (qint64 id : runs)
        selectors.push_back(std::to_string(id));
    const qint64 baseline = m_compare->baseline();
    const auto format = reportFormatOfPath(path);
    try {
        if (!format)
            throw ReportWriteError("unknown report format '" + QFileInfo(path).suffix().toStdString()
                                   + "': use .html, .pdf, .md, .csv or .json");
        const Store store(studyPath().toStdString(), Store::Access::ReadOnly);
        const Report report = buildReport(store, selectors, baseline > 0 ? std::to_string(baseline) : std::string(),
                                          m_compare->tolerance());
        const QStringList files = writeReport(report, *format, path);
        statusBar()->showMessage(tr("Report written: %1").arg(files.join(QStringLiteral(", "))), 10000);
        return true;
    } catch (const std::exception &e) {
        QMessageBox::warning(this, tr("Cannot write the report"), QString::fromStdString(e.what()));
        return false;
    }
}

void MainWindow::exportReport()
{
    const QString suggested = QFileInfo(studyPath())
                                  .absoluteDir()
                                  .filePath(QFileInfo(studyPath()).completeBaseName() + QStringLiteral("-report.html"));
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export report"), suggested,
        tr("HTML, one file (*.html);;PDF (*.pdf);;Markdown with images (*.md);;CSV (*.csv);;JSON (*.json)"));
    if (!path.isEmpty())
        exportReportTo(path);
}

void MainWindow::showSelectedTimelines()
{
    QList<RunSnapshotPtr> runs;
    for (const qint64 id : m_runs->selectedRunIds())
        if (const RunSnapshotPtr run = m_watcher->snapshot().find(id))
            runs << run;
    m_memory->setRuns(runs);
}

void MainWindow::compareSelected()
{
    const QList<qint64> ids = m_runs->selectedRunIds();
    m_compare->setSelectedRuns(ids);
    showPage(2);
}

} // namespace optlog
