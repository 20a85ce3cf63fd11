// SPDX-License-Identifier: MIT
#include "ui/decisionsummary.h"

#include "core/analysis/decisionwords.h"
#include "core/contract/format.h"
#include "ui/charts/charttheme.h"

#include <QHeaderView>
#include <QScrollBar>

namespace optlog {

namespace {

RiskLevel actionLevel(Action action)
{
    switch (action) {
    case Action::TakeIt:
    case Action::TakeItWhereMemoryBinds: return RiskLevel::Fine;
    case Action::AddSeeds:
    case Action::NotComparable:
    case Action::NoVerdict: return RiskLevel::Watch;
    case Action::WorseQuality: return RiskLevel::Trouble;
    case Action::Baseline:
    case Action::SameNotFaster: break;
    }
    return RiskLevel::Unknown;
}

} // namespace

DecisionSummary::DecisionSummary(QWidget *parent)
    : QTableWidget(0, ColumnCount, parent)
{
    setHorizontalHeaderLabels(
        {tr("Technique"), tr("Quality against the baseline"), tr("Speed"), tr("Memory"), tr("Action")});
    horizontalHeaderItem(Quality)->setToolTip(
        tr("Difference of the mean validation losses at matched tokens, with Welch's 95% interval where both sides "
           "have two seeds or more"));
    horizontalHeaderItem(Speed)->setToolTip(
        tr("Steady tokens/s over the baseline's, with its 95% interval over blocks of steps and seeds"));
    horizontalHeaderItem(Memory)->setToolTip(tr("Peak memory, and what it saves against the baseline's (within ±%1: "
                                                "the same)")
                                                 .arg(QString::fromStdString(percent(kSameMemory))));
    verticalHeader()->hide();
    setEditTriggers(QAbstractItemView::NoEditTriggers);
    setSelectionMode(QAbstractItemView::NoSelection);
    setFocusPolicy(Qt::NoFocus);
    setWordWrap(true); // a quality verdict too long for its share takes a second line, never cut
    setTextElideMode(Qt::ElideRight);
    // Never a horizontal scroll bar: the columns share the width the pane has.
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    horizontalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    horizontalHeader()->setStretchLastSection(false);
}

void DecisionSummary::setRows(const std::vector<ComparisonRow> &rows)
{
    setRowCount(0);
    for (const ComparisonRow &r : rows) {
        const int row = rowCount();
        insertRow(row);
        const DecisionCells cells = decisionCells(r);
        const QString verdict = QString::fromStdString(verdictText(r));
        const QString name = QString::fromStdString(r.name);
        const auto put = [&](int column, const std::string &text, Qt::Alignment alignment) {
            auto *item = new QTableWidgetItem(QString::fromStdString(text));
            item->setTextAlignment(alignment | Qt::AlignVCenter);
            item->setToolTip(QStringLiteral("<b>%1</b>: %2").arg(name.toHtmlEscaped(), verdict.toHtmlEscaped()));
            setItem(row, column, item);
            return item;
        };
        put(Technique, r.name, Qt::AlignLeft);
        put(Quality, cells.quality, Qt::AlignLeft);
        put(Speed, cells.speed, Qt::AlignRight);
        put(Memory, cells.memory, Qt::AlignRight);
        QTableWidgetItem *action = put(Action, cells.action, Qt::AlignLeft);
        if (const QColor tint = riskColor(actionLevel(r.action)); tint.isValid()) {
            action->setBackground(tint);
            action->setForeground(QColor(Qt::black));
        }
        QFont bold = action->font();
        bold.setBold(true);
        action->setFont(bold);
    }
    fitColumns();
}

void DecisionSummary::resizeEvent(QResizeEvent *event)
{
    QTableWidget::resizeEvent(event);
    fitColumns();
}

void DecisionSummary::fitColumns()
{
    // Speed, memory and the action at their text's width; the name and the quality share the
    // rest, the quality taking two parts to the name's one; each elides past its share.
    const QHeaderView *header = horizontalHeader();
    const auto natural = [&](int column) {
        int width = header->sectionSizeHint(column);
        for (int row = 0; row < rowCount(); ++row)
            width = std::max(width, sizeHintForIndex(model()->index(row, column)).width());
        return width + 8;
    };
    const int fixed = natural(Speed) + natural(Memory) + natural(Action);
    const int rest = std::max(0, viewport()->width() - fixed);
    const int name = std::min(natural(Technique), std::max(rest / 3, 80));
    setColumnWidth(Speed, natural(Speed));
    setColumnWidth(Memory, natural(Memory));
    setColumnWidth(Action, natural(Action));
    setColumnWidth(Technique, name);
    setColumnWidth(Quality, std::max(0, rest - name));
    // Every row in view: as tall as its wrapped text, and the table as tall as its rows.
    resizeRowsToContents();
    int height = horizontalHeader()->sizeHint().height() + 2 * frameWidth();
    for (int row = 0; row < rowCount(); ++row)
        height += rowHeight(row);
    if (height != this->height())
        setFixedHeight(height);
}

} // namespace optlog
