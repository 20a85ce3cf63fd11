// SPDX-License-Identifier: MIT
#include "ui/runsview.h"

#include "ui/runtablemodel.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDropEvent>
#include <QFileInfo>
#include <QGridLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QMimeData>
#include <QPushButton>
#include <QScrollBar>
#include <QSignalBlocker>
#include <QStackedWidget>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QUrl>
#include <QVBoxLayout>
#include <iterator>

namespace optlog {

namespace {

// Draws the Steps column as a progress bar while a run has steps to show.
class ProgressDelegate : public QStyledItemDelegate
{
public:
    using QStyledItemDelegate::QStyledItemDelegate;
    void paint(QPainter *painter, const QStyleOptionViewItem &option, const QModelIndex &index) const override
    {
        const QString text = index.data().toString();
        if (text.isEmpty())
            return QStyledItemDelegate::paint(painter, option, index);
        QStyleOptionProgressBar bar;
        bar.rect = option.rect.adjusted(2, 3, -2, -3);
        bar.minimum = 0;
        bar.maximum = 1000;
        bar.progress = int(index.data(RunTableModel::ProgressRole).toDouble() * 1000);
        bar.text = text;
        bar.textVisible = true;
        bar.state = option.state | QStyle::State_Horizontal;
        QApplication::style()->drawControl(QStyle::CE_ProgressBar, &bar, painter);
    }
};

} // namespace

RunsView::RunsView(RunTableModel *model, QWidget *parent)
    : QWidget(parent)
    , m_model(model)
    , m_table(new QTableView)
    , m_pages(new QStackedWidget)
    , m_queueStatus(new QLabel)
    , m_filter(new QLineEdit)
    , m_outcome(new QComboBox)
    , m_group(new QComboBox)
    , m_showArchived(new QCheckBox(tr("Archived")))
{
    m_table->setModel(model);
    // Runs drag out of the table; drops (runs of another study, a study file) land on this view,
    // over the table or the empty state alike.
    m_table->setDragEnabled(true);
    m_table->setDragDropMode(QAbstractItemView::DragOnly);
    m_table->setDefaultDropAction(Qt::CopyAction);
    setAcceptDrops(true);
    installEventFilter(this);
    m_table->setItemDelegateForColumn(RunTableModel::Progress, new ProgressDelegate(m_table));
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_table->setAlternatingRowColors(true);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_table->setColumnWidth(RunTableModel::Name, 135);
    m_table->setColumnWidth(RunTableModel::State, 85);
    m_table->setColumnWidth(RunTableModel::Progress, 85);
    m_table->setColumnWidth(RunTableModel::ValidationLoss, 62);
    m_table->setColumnWidth(RunTableModel::TokensPerSecond, 62);
    m_table->setColumnWidth(RunTableModel::PeakMemory, 70);
    m_table->setColumnWidth(RunTableModel::Eta, 60);
    // What a finished run measured beside its name, where the narrowest dock (350 px at 1280
    // across) still shows it; its state and progress follow, and the Monitor shows a live one.
    QHeaderView *header = m_table->horizontalHeader();
    const int shownFirst[] = {RunTableModel::Name, RunTableModel::ValidationLoss, RunTableModel::TokensPerSecond,
                              RunTableModel::PeakMemory};
    for (int visual = 0; visual < int(std::size(shownFirst)); ++visual)
        header->moveSection(header->visualIndex(shownFirst[visual]), visual);

    auto *empty = new QWidget;
    auto *emptyLayout = new QVBoxLayout(empty);
    auto *emptyText = new QLabel(tr("<h3>No runs yet</h3><p>Design a run and add it to the queue, or start from "
                                    "the seed's optimization log: an FP32 baseline and every memory and "
                                    "precision technique at the default preset.</p>"));
    emptyText->setWordWrap(true);
    emptyText->setAlignment(Qt::AlignCenter);
    auto *addPresets = new QPushButton(tr("Add the optimization-log presets"));
    emptyLayout->addStretch();
    emptyLayout->addWidget(emptyText);
    emptyLayout->addWidget(addPresets, 0, Qt::AlignCenter);
    emptyLayout->addStretch();
    m_pages->addWidget(empty);
    m_pages->addWidget(m_table);

    m_queueStatus->setWordWrap(true);
    m_queueStatus->setToolTip(tr("The queue runs one engine process at a time: runs in parallel would distort "
                                 "each other's throughput and memory."));
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(buildFilterBar());
    layout->addWidget(m_pages, 1);
    layout->addWidget(m_queueStatus);

    connect(addPresets, &QPushButton::clicked, this, &RunsView::addPresetsRequested);
    connect(model, &QAbstractItemModel::rowsInserted, this, &RunsView::updateEmptyState);
    connect(model, &QAbstractItemModel::rowsRemoved, this, &RunsView::updateEmptyState);
    connect(model, &QAbstractItemModel::modelReset, this, &RunsView::updateEmptyState);
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this] { Q_EMIT currentRunChanged(currentRunId()); });
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            [this] { Q_EMIT selectionChanged(); });
    updateEmptyState();
}

int RunsView::widthForAllColumns() const
{
    int width = 2 * m_table->frameWidth() + m_table->verticalScrollBar()->sizeHint().width();
    for (int column = 0; column < RunTableModel::ColumnCount; ++column)
        width += m_table->columnWidth(column);
    return width;
}

void RunsView::updateEmptyState()
{
    // A filter that keeps nothing shows the empty table, not the invitation to a first run.
    const FilterState state = filterState();
    const bool filtering = !state.text.isEmpty() || !state.outcome.isEmpty() || !state.group.isEmpty();
    m_pages->setCurrentIndex(m_model->rowCount() == 0 && !filtering ? 0 : 1);
}

QWidget *RunsView::buildFilterBar()
{
    m_filter->setPlaceholderText(tr("Filter: words, tag:long, mode:pure-bf16, note:spike, -tag:old"));
    m_filter->setClearButtonEnabled(true);
    m_filter->setToolTip(tr("Every word must match. A bare word: part of the name, a former name, a tag, the note, "
                            "the group or a config value. tag:, name:, note:, group:, outcome:, is:archived, or a "
                            "config field (precision.mode or mode). -word leaves out; \"two words\" is one word. "
                            "The same as optlog runs --filter."));
    m_outcome->addItem(tr("Any outcome"), QString());
    for (const char *outcome : {"running", "completed", "diverged", "failed", "cancelled", "oom", "crashed"})
        m_outcome->addItem(QString::fromLatin1(outcome), QString::fromLatin1(outcome));
    m_group->addItem(tr("Any group"), QString());
    m_showArchived->setToolTip(tr("Show archived runs too"));
    // Two rows, so that the dock can still be dragged narrow.
    for (QComboBox *list : {m_outcome, m_group}) {
        list->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        list->setMinimumContentsLength(4);
    }
    auto *bar = new QWidget;
    auto *layout = new QGridLayout(bar);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_filter, 0, 0, 1, 3);
    layout->addWidget(m_outcome, 1, 0);
    layout->addWidget(m_group, 1, 1);
    layout->addWidget(m_showArchived, 1, 2);
    layout->setColumnStretch(0, 1);
    layout->setColumnStretch(1, 1);
    const auto changed = [this] {
        updateEmptyState();
        Q_EMIT filterChanged();
    };
    connect(m_filter, &QLineEdit::textChanged, this, changed);
    connect(m_outcome, &QComboBox::currentIndexChanged, this, changed);
    connect(m_group, &QComboBox::currentIndexChanged, this, changed);
    connect(m_showArchived, &QCheckBox::toggled, this, changed);
    return bar;
}

RunsView::FilterState RunsView::filterState() const
{
    return {m_filter->text(), m_outcome->currentData().toString(), m_group->currentData().toString(),
            m_showArchived->isChecked()};
}

void RunsView::setFilterState(const FilterState &state)
{
    const QSignalBlocker a(m_filter), b(m_outcome), c(m_group), d(m_showArchived);
    m_filter->setText(state.text);
    m_outcome->setCurrentIndex(qMax(0, m_outcome->findData(state.outcome)));
    if (!state.group.isEmpty() && m_group->findData(state.group) < 0)
        m_group->addItem(state.group, state.group); // the study's groups arrive with its snapshot
    m_group->setCurrentIndex(qMax(0, m_group->findData(state.group)));
    m_showArchived->setChecked(state.showArchived);
    updateEmptyState();
    Q_EMIT filterChanged();
}

void RunsView::setGroups(const QStringList &groups)
{
    const QString current = m_group->currentData().toString();
    QStringList wanted = groups;
    if (!current.isEmpty() && !wanted.contains(current))
        wanted << current; // keep the user's pick while the study has no such group
    QStringList shown;
    for (int i = 1; i < m_group->count(); ++i)
        shown << m_group->itemData(i).toString();
    if (shown == wanted)
        return;
    const QSignalBlocker blocker(m_group);
    while (m_group->count() > 1)
        m_group->removeItem(1);
    for (const QString &group : wanted)
        m_group->addItem(group, group);
    m_group->setCurrentIndex(qMax(0, m_group->findData(current)));
}

RunFilter RunsView::filter() const
{
    const FilterState state = filterState();
    // The lists' picks are words of the same filter, quoted: a group's name may hold spaces.
    QString picks;
    if (!state.outcome.isEmpty())
        picks += QStringLiteral(" outcome:") + state.outcome;
    if (!state.group.isEmpty())
        picks += QStringLiteral(" group:\"%1\"").arg(QString(state.group).remove(QLatin1Char('"')));
    RunFilter filter;
    m_filterError.clear();
    try {
        filter = RunFilter::parse((state.text + picks).toStdString(), m_recordedKeys);
    } catch (const std::exception &e) {
        m_filterError = QString::fromStdString(e.what());
        filter = RunFilter::parse(picks.toStdString());
    }
    m_filter->setStyleSheet(m_filterError.isEmpty() ? QString() : QStringLiteral("QLineEdit { background: #fde0dc; }"));
    m_filter->setToolTip(m_filterError.isEmpty() ? m_filter->placeholderText() : m_filterError);
    filter.setShowArchived(state.showArchived);
    return filter;
}

void RunsView::setStudyPath(const QString &path)
{
    m_model->setStudyPath(path);
}

bool RunsView::eventFilter(QObject *watched, QEvent *event)
{
    const auto type = event->type();
    if (type != QEvent::DragEnter && type != QEvent::DragMove && type != QEvent::Drop)
        return QWidget::eventFilter(watched, event);
    auto *drop = static_cast<QDropEvent *>(event);
    const QMimeData *data = drop->mimeData();
    const QJsonObject runs = QJsonDocument::fromJson(data->data(QString::fromLatin1(kRunsMimeType))).object();
    const QString source = runs.value(QStringLiteral("study")).toString();
    QString file;
    for (const QUrl &url : data->urls())
        if (url.isLocalFile())
            file = url.toLocalFile();
    // Runs from this study would copy onto themselves: only another study's runs, or a study file.
    const bool fromElsewhere = !source.isEmpty() && QFileInfo(source) != QFileInfo(m_model->studyPath());
    if (!fromElsewhere && file.isEmpty())
        return QWidget::eventFilter(watched, event);
    drop->setDropAction(Qt::CopyAction);
    drop->accept();
    if (type == QEvent::Drop) {
        if (fromElsewhere) {
            QList<qint64> ids;
            for (const QJsonValue &id : runs.value(QStringLiteral("runs")).toArray())
                ids << qint64(id.toDouble());
            Q_EMIT runsDropped(source, ids);
        } else {
            Q_EMIT studyFileDropped(file);
        }
    }
    return true;
}

void RunsView::addBesideQueue(QWidget *widget)
{
    auto *column = static_cast<QVBoxLayout *>(layout());
    column->insertWidget(column->indexOf(m_queueStatus), widget);
}

void RunsView::setQueueStatus(const QString &text)
{
    m_queueStatus->setText(text);
}

QList<qint64> RunsView::selectedRunIds() const
{
    QList<qint64> ids;
    for (const QModelIndex &index : m_table->selectionModel()->selectedRows())
        if (const qint64 id = index.data(RunTableModel::RunIdRole).toLongLong(); id > 0)
            ids << id;
    std::sort(ids.begin(), ids.end());
    return ids;
}

QList<int> RunsView::selectedQueueEntries() const
{
    QList<int> entries;
    for (const QModelIndex &index : m_table->selectionModel()->selectedRows())
        if (const int entry = index.data(RunTableModel::QueueEntryRole).toInt(); entry > 0)
            entries << entry;
    return entries;
}

qint64 RunsView::currentRunId() const
{
    const QModelIndex current = m_table->currentIndex();
    return current.isValid() ? current.data(RunTableModel::RunIdRole).toLongLong() : 0;
}

QString RunsView::currentClusterTask() const
{
    const QModelIndex current = m_table->currentIndex();
    return current.isValid() ? current.data(RunTableModel::ClusterTaskRole).toString() : QString();
}

QStringList RunsView::selectedClusterRuns() const
{
    QStringList names;
    for (const QModelIndex &index : m_table->selectionModel()->selectedRows()) {
        const RunRow &row = m_model->row(index.row());
        if (!row.clusterTask.isEmpty() && row.clusterState && !hasEnded(*row.clusterState) && !names.contains(row.name))
            names << row.name;
    }
    return names;
}

} // namespace optlog
