// SPDX-License-Identifier: MIT
#pragma once

#include "core/analysis/runfilter.h"
#include "ui/runqueue.h"
#include "ui/studysnapshot.h"

#include <QAbstractTableModel>
#include <QList>
#include <QMimeData>
#include <QString>

namespace optlog {

// One line of the runs table: a run of the study, a queued run the engine has not created yet, or
// a run on a cluster not gathered into the study yet.
struct RunRow
{
    QString key;          // "run:<id>", "queued:<entry id>" or "cluster:<job>_<task>": stable while the row lives
    qint64 runId = 0;     // 0 for queued rows
    int queueEntryId = 0; // 0 for study rows
    QString name;
    std::optional<Outcome> outcome;              // study rows: empty while running
    std::optional<QueueEntry::State> queueState; // queue rows
    QString clusterTask;                         // cluster rows: Slurm's id of the task, "4242_1"
    std::optional<TaskState> clusterState;       // cluster rows: as the scheduler says
    QString state;                               // in words: the outcome, "running", or the queue entry's state
    QString message;
    qint64 stepsDone = 0;
    qint64 totalSteps = 0;
    double etaSeconds = -1;
    double finalValidationLoss = qQNaN();
    double tokensPerSecond = 0; // steady-state median
    qint64 peakBytes = 0;
    QString tags; // "long, server"
    QString note;
    bool archived = false;

    bool operator==(const RunRow &other) const;
};

// The MIME type of runs dragged out of a study: JSON {"study": path, "runs": [ids]}.
inline constexpr const char *kRunsMimeType = "application/x-optlog-runs";

// The study's runs the filter keeps (by default all but the archived ones), its runs on a cluster
// not gathered yet, then the queue's pending entries.
QList<RunRow> runRows(const StudySnapshot &study, const QList<QueueEntry> &queue, const RunFilter &filter = {});

class RunTableModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    // ETA comes last: it is empty for every run but the running one.
    enum Column { Name, State, Progress, ValidationLoss, TokensPerSecond, PeakMemory, Tags, Eta, ColumnCount };
    enum Role { ProgressRole = Qt::UserRole + 1, RunIdRole, QueueEntryRole, ClusterTaskRole };

    using QAbstractTableModel::QAbstractTableModel;

    // Updates in place: rows keep their identity (and the view its selection) across refreshes.
    void setRows(const QList<RunRow> &rows);
    const RunRow &row(int index) const { return m_rows.at(index); }

    // Study rows drag out as kRunsMimeType naming this study.
    void setStudyPath(const QString &path) { m_studyPath = path; }
    const QString &studyPath() const { return m_studyPath; }
    Qt::ItemFlags flags(const QModelIndex &index) const override;
    QStringList mimeTypes() const override;
    QMimeData *mimeData(const QModelIndexList &indexes) const override;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QList<RunRow> m_rows;
    QString m_studyPath;
};

} // namespace optlog
