// SPDX-License-Identifier: MIT
#pragma once

#include <QList>
#include <QWidget>

class QLabel;
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
    QTableView *table() const { return m_table; }
    void setQueueStatus(const QString &text);
    // The width that shows every column without scrolling.
    int widthForAllColumns() const;

Q_SIGNALS:
    void addPresetsRequested();
    void currentRunChanged(qint64 runId);

private:
    void updateEmptyState();

    RunTableModel *m_model;
    QTableView *m_table;
    QStackedWidget *m_pages;
    QLabel *m_queueStatus;
};

} // namespace optlog
