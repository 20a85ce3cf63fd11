// SPDX-License-Identifier: MIT
#include "ui/runtablemodel.h"

#include "core/analysis/runtext.h"
#include "core/contract/format.h"

#include <QApplication>
#include <QColor>
#include <QFont>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMimeData>
#include <QStyle>

namespace optlog {

bool RunRow::operator==(const RunRow &o) const
{
    const bool sameLoss = (qIsNaN(finalValidationLoss) && qIsNaN(o.finalValidationLoss))
                          || finalValidationLoss == o.finalValidationLoss;
    return key == o.key && runId == o.runId && queueEntryId == o.queueEntryId && name == o.name && state == o.state
           && message == o.message && stepsDone == o.stepsDone && totalSteps == o.totalSteps
           && etaSeconds == o.etaSeconds && sameLoss && tokensPerSecond == o.tokensPerSecond && peakBytes == o.peakBytes
           && tags == o.tags && note == o.note && archived == o.archived && clusterTask == o.clusterTask
           && clusterState == o.clusterState;
}

namespace {

// A run's name, outcome, progress and measurements, from the study or from a task's shard.
void takeRun(RunRow &row, const RunSnapshot &snapshot)
{
    const RunRecord &run = snapshot.run();
    row.name = QString::fromStdString(run.name);
    row.outcome = run.outcome;
    row.message = QString::fromStdString(run.message);
    row.stepsDone = qint64(snapshot.metrics.size());
    row.totalSteps = snapshot.totalSteps;
    row.etaSeconds = snapshot.etaSeconds;
    row.finalValidationLoss = snapshot.finalValidationLoss();
    row.tokensPerSecond = snapshot.summary.throughput.median;
    row.peakBytes = snapshot.summary.peakBytes;
}

RunRow clusterRow(const ClusterTaskSnapshot &task)
{
    RunRow row;
    row.clusterTask = QString::fromStdString(task.pending.slurmId());
    row.key = QStringLiteral("cluster:") + row.clusterTask;
    if (task.run)
        takeRun(row, *task.run);
    row.name = QString::fromStdString(task.pending.task.runName);
    row.clusterState = task.pending.state;
    row.state = QString::fromStdString(task.pending.stateText());
    if (!task.shardError.empty())
        row.message = QString::fromStdString(task.shardError);
    return row;
}

} // namespace

QList<RunRow> runRows(const StudySnapshot &study, const QList<QueueEntry> &queue, const RunFilter &filter)
{
    QList<RunRow> rows;
    for (const auto &snapshot : study.runs) {
        const RunRecord &run = snapshot->run();
        const std::optional<RunConfig> &config = snapshot->summary.config;
        if (!filter.matches(run, config ? &*config : nullptr))
            continue;
        RunRow row;
        takeRun(row, *snapshot);
        row.runId = run.id;
        row.key = QStringLiteral("run:%1").arg(run.id);
        row.state = QString::fromLatin1(outcomeName(run.outcome));
        row.tags = QString::fromStdString(tagsText(run));
        row.note = QString::fromStdString(run.note);
        row.archived = run.archived;
        rows.append(row);
    }
    for (const ClusterTaskSnapshot &task : study.clusterTasks) {
        // Filtered as the run it is: by its shard's record once it has one, else by its name.
        RunRecord run;
        run.name = task.pending.task.runName;
        const RunRecord &record = task.run ? task.run->run() : run;
        const std::optional<RunConfig> *config = task.run ? &task.run->summary.config : nullptr;
        if (filter.matches(record, config && *config ? &**config : nullptr))
            rows.append(clusterRow(task));
    }
    for (const auto &entry : queue) {
        if (entry.state == QueueEntry::State::Running)
            continue; // shown by its study row once the engine has created it
        RunRow row;
        row.queueEntryId = entry.id;
        row.key = QStringLiteral("queued:%1").arg(entry.id);
        row.name = QString::fromStdString(entry.run.name);
        row.queueState = entry.state;
        row.state = QueueEntry::stateName(entry.state);
        row.message = entry.message;
        rows.append(row);
    }
    return rows;
}

void RunTableModel::setRows(const QList<RunRow> &rows)
{
    QHash<QString, int> wanted;
    for (int i = 0; i < rows.size(); ++i)
        wanted.insert(rows[i].key, i);
    // Remove rows that went away (back to front, so indexes stay valid).
    for (int i = m_rows.size() - 1; i >= 0; --i) {
        if (wanted.contains(m_rows[i].key))
            continue;
        beginRemoveRows({}, i, i);
        m_rows.removeAt(i);
        endRemoveRows();
    }
    // Rows keep their relative order, so the survivors are a prefix-ordered subsequence of `rows`;
    // walk both lists together, updating matches and inserting what is new.
    for (int i = 0; i < rows.size(); ++i) {
        if (i < m_rows.size() && m_rows[i].key == rows[i].key) {
            if (!(m_rows[i] == rows[i])) {
                m_rows[i] = rows[i];
                Q_EMIT dataChanged(index(i, 0), index(i, ColumnCount - 1));
            }
            continue;
        }
        beginInsertRows({}, i, i);
        m_rows.insert(i, rows[i]);
        endInsertRows();
    }
}

Qt::ItemFlags RunTableModel::flags(const QModelIndex &index) const
{
    Qt::ItemFlags flags = QAbstractTableModel::flags(index);
    if (index.isValid() && m_rows.at(index.row()).runId > 0 && m_rows.at(index.row()).outcome)
        flags |= Qt::ItemIsDragEnabled; // a finished run can be copied into another study
    return flags;
}

QStringList RunTableModel::mimeTypes() const
{
    return {QString::fromLatin1(kRunsMimeType)};
}

QMimeData *RunTableModel::mimeData(const QModelIndexList &indexes) const
{
    QJsonArray ids;
    for (const QModelIndex &index : indexes)
        if (const qint64 id = m_rows.value(index.row()).runId; id > 0 && !ids.contains(id))
            ids.append(id);
    auto *data = new QMimeData;
    data->setData(QString::fromLatin1(kRunsMimeType),
                  QJsonDocument(QJsonObject{{QStringLiteral("study"), m_studyPath}, {QStringLiteral("runs"), ids}})
                      .toJson(QJsonDocument::Compact));
    return data;
}

int RunTableModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int RunTableModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

namespace {

QString durationText(double seconds)
{
    if (seconds < 0)
        return {};
    const qint64 s = qint64(seconds + 0.5);
    if (s < 60)
        return QStringLiteral("%1 s").arg(s);
    // Short forms: the ETA column is narrow.
    if (s < 3600)
        return QStringLiteral("%1m %2s").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
    return QStringLiteral("%1h %2m").arg(s / 3600).arg((s % 3600) / 60, 2, 10, QLatin1Char('0'));
}

QColor stateColor(const RunRow &row)
{
    if (row.clusterState == TaskState::Running)
        return QColor(0x15, 0x65, 0xc0);
    if (row.clusterState == TaskState::Queued || row.clusterState == TaskState::Unknown)
        return QColor(0x61, 0x61, 0x61);
    if (row.outcome == Outcome::Completed)
        return QColor(0x2e, 0x7d, 0x32);
    if (row.runId > 0 && !row.outcome)
        return QColor(0x15, 0x65, 0xc0); // running
    if (row.queueState == QueueEntry::State::Queued)
        return QColor(0x61, 0x61, 0x61);
    return QColor(0xc6, 0x28, 0x28); // every other outcome needs the user's attention
}

// "Slurm 4242_1 · running": the job first, so that a narrow column wraps it above the state. A task
// that ended says how its run ended, not gathered yet.
QString clusterStateText(const RunRow &row)
{
    QString text = RunTableModel::tr("Slurm %1 · %2").arg(row.clusterTask, row.state);
    if (row.outcome)
        text += RunTableModel::tr(" · run %1, not gathered").arg(QString::fromLatin1(outcomeName(row.outcome)));
    if (!row.message.isEmpty())
        text += QStringLiteral(": ") + row.message;
    return text;
}

} // namespace

QVariant RunTableModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= m_rows.size())
        return {};
    const RunRow &r = m_rows[index.row()];
    if (role == RunIdRole)
        return r.runId;
    if (role == QueueEntryRole)
        return r.queueEntryId;
    if (role == ClusterTaskRole)
        return r.clusterTask;
    if (role == ProgressRole)
        return r.totalSteps > 0 ? double(r.stepsDone) / double(r.totalSteps) : 0.0;
    if (role == Qt::ToolTipRole) {
        QString tip = r.message.isEmpty() ? r.name : r.name + QStringLiteral("\n") + r.message;
        if (!r.clusterTask.isEmpty())
            tip += tr("\nOn Slurm as job %1, not gathered into the study yet (optlog gather)").arg(r.clusterTask);
        if (!r.tags.isEmpty())
            tip += tr("\nTags: %1").arg(r.tags);
        if (!r.note.isEmpty())
            tip += QStringLiteral("\n\n") + r.note;
        return tip;
    }
    if (role == Qt::DecorationRole && index.column() == Name && !r.note.isEmpty())
        return QApplication::style()->standardIcon(QStyle::SP_FileDialogContentsView); // the run has a note
    if (role == Qt::FontRole && r.archived) {
        QFont font;
        font.setItalic(true); // shown only when the list shows archived runs
        return font;
    }
    if (role == Qt::ForegroundRole && index.column() == State)
        return stateColor(r);
    if (role == Qt::TextAlignmentRole && index.column() >= ValidationLoss)
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case Name: return r.name;
    case State:
        if (!r.clusterTask.isEmpty())
            return clusterStateText(r);
        return r.message.isEmpty() || r.outcome == Outcome::Completed ? r.state
                                                                      : r.state + QStringLiteral(": ") + r.message;
    case Progress: return r.totalSteps > 0 ? QStringLiteral("%1 / %2").arg(r.stepsDone).arg(r.totalSteps) : QString();
    case Eta:
        return (r.runId > 0 || r.clusterState == TaskState::Running) && !r.outcome ? durationText(r.etaSeconds)
                                                                                   : QString();
    case ValidationLoss:
        return qIsNaN(r.finalValidationLoss) ? QString() : QString::number(r.finalValidationLoss, 'f', 4);
    case TokensPerSecond: return r.tokensPerSecond > 0 ? QString::number(r.tokensPerSecond, 'f', 0) : QString();
    case PeakMemory: return r.peakBytes > 0 ? QString::fromStdString(formatBytes(r.peakBytes)) : QString();
    case Tags: return r.archived ? (r.tags.isEmpty() ? tr("archived") : r.tags + tr(" · archived")) : r.tags;
    }
    return {};
}

QVariant RunTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case Name: return tr("Run");
    case State: return tr("State");
    case Progress: return tr("Steps");
    case Eta: return tr("ETA");
    case ValidationLoss: return tr("Val loss");
    case TokensPerSecond: return tr("Tokens/s");
    case PeakMemory: return tr("Peak");
    case Tags: return tr("Tags");
    }
    return {};
}

} // namespace optlog
