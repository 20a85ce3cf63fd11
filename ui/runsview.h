// SPDX-License-Identifier: MIT
#pragma once

#include "core/analysis/runfilter.h"

#include <QList>
#include <QString>
#include <QWidget>
#include <string>
#include <vector>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QStackedWidget;
class QTableView;

namespace optlog {

class RunTableModel;

// The study's runs and the queue in one table, with a progress bar for the running run and an
// empty state that offers the optimization-log presets.
class RunsView : public QWidget
{
    Q_OBJECT
public:
    RunsView(RunTableModel *model, QWidget *parent = nullptr);

    QList<qint64> selectedRunIds() const;
    QList<int> selectedQueueEntries() const;
    qint64 currentRunId() const;
    // The current row's Slurm task ("4242_1") when it is a run on a cluster not gathered yet.
    QString currentClusterTask() const;
    // The names of the selected runs on a cluster that are still queued or running there.
    QStringList selectedClusterRuns() const;
    QTableView *table() const { return m_table; }

    // What the list shows: the filter's words (RunFilter's syntax, the CLI's --filter), an outcome
    // and a group picked from lists, and whether archived runs show too.
    struct FilterState
    {
        QString text;
        QString outcome; // empty: any
        QString group;   // empty: any
        bool showArchived = false;
    };
    FilterState filterState() const;
    void setFilterState(const FilterState &state);
    // The groups the group list offers (the study's).
    void setGroups(const QStringList &groups);
    // The config keys of the study's recorded runs, which the filter accepts beside the engine's.
    void setRecordedKeys(std::vector<std::string> keys) { m_recordedKeys = std::move(keys); }
    // The filter the state makes. Words it cannot read are left out and marked on the filter field
    // with the reason (filterError()).
    RunFilter filter() const;
    QString filterError() const { return m_filterError; }
    QLineEdit *filterEdit() const { return m_filter; }
    // Where dragged runs say they come from (the open study).
    void setStudyPath(const QString &path);
    void setQueueStatus(const QString &text);
    // Shown just above the queue's status: where its runs train.
    void addBesideQueue(QWidget *widget);
    // The width that shows every column without scrolling.
    int widthForAllColumns() const;

Q_SIGNALS:
    void addPresetsRequested();
    void currentRunChanged(qint64 runId); // 0 for a queued run, or one on a cluster
    void selectionChanged();              // selectedRunIds() says which now
    void filterChanged();
    // Runs dragged here from another workbench's study, or a study file dropped here.
    void runsDropped(const QString &sourceStudy, const QList<qint64> &runIds);
    void studyFileDropped(const QString &path);

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void updateEmptyState();
    QWidget *buildFilterBar();

    RunTableModel *m_model;
    QTableView *m_table;
    QStackedWidget *m_pages;
    QLabel *m_queueStatus;
    QLineEdit *m_filter;
    QComboBox *m_outcome;
    QComboBox *m_group;
    QCheckBox *m_showArchived;
    mutable QString m_filterError;
    std::vector<std::string> m_recordedKeys;
};

} // namespace optlog
