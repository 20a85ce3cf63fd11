// SPDX-License-Identifier: MIT
#include "ui/runsview.h"

#include "ui/runtablemodel.h"

#include <QApplication>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QScrollBar>
#include <QStackedWidget>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QVBoxLayout>

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
{
    m_table->setModel(model);
    m_table->setItemDelegateForColumn(RunTableModel::Progress, new ProgressDelegate(m_table));
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_table->setAlternatingRowColors(true);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_table->setColumnWidth(RunTableModel::Name, 150);
    m_table->setColumnWidth(RunTableModel::State, 85);
    m_table->setColumnWidth(RunTableModel::Progress, 85);
    m_table->setColumnWidth(RunTableModel::ValidationLoss, 70);
    m_table->setColumnWidth(RunTableModel::TokensPerSecond, 70);
    m_table->setColumnWidth(RunTableModel::PeakMemory, 90);
    m_table->setColumnWidth(RunTableModel::Eta, 60);

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
    layout->addWidget(m_pages, 1);
    layout->addWidget(m_queueStatus);

    connect(addPresets, &QPushButton::clicked, this, &RunsView::addPresetsRequested);
    connect(model, &QAbstractItemModel::rowsInserted, this, &RunsView::updateEmptyState);
    connect(model, &QAbstractItemModel::rowsRemoved, this, &RunsView::updateEmptyState);
    connect(model, &QAbstractItemModel::modelReset, this, &RunsView::updateEmptyState);
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this] { Q_EMIT currentRunChanged(currentRunId()); });
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
    m_pages->setCurrentIndex(m_model->rowCount() == 0 ? 0 : 1);
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

} // namespace optlog
