// SPDX-License-Identifier: MIT
#include "ui/decisionsummary.h"

#include "core/contract/format.h"
#include "ui/charts/charttheme.h"

#include <QHeaderView>
#include <QScrollBar>
#include <cmath>

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

QString signedNats(double value)
{
    return QStringLiteral("%1%2").arg(value >= 0 ? QStringLiteral("+") : QString()).arg(value, 0, 'f', 4);
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
        tr("Steady tokens/s over the baseline's, with the range over seeds (one seed: p10–p90 of its steps)"));
    horizontalHeaderItem(Memory)->setToolTip(tr("Peak memory saved against the baseline's"));
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

QString DecisionSummary::qualityText(const ComparisonRow &row)
{
    const QualityVerdict &q = row.quality;
    if (row.action == Action::Baseline)
        return row.seeds == 1 ? tr("baseline, 1 seed") : tr("baseline, %1 seeds").arg(row.seeds);
    if (row.action == Action::NoVerdict || q.kind == QualityVerdict::Kind::NotComparable)
        return row.validationDifference.empty()
                   ? tr("no verdict")
                   : tr("validated differently: %1").arg(QString::fromStdString(row.validationDifference));
    const char *word = q.kind == QualityVerdict::Kind::Same     ? "same"
                       : q.kind == QualityVerdict::Kind::Worse  ? "worse"
                       : q.kind == QualityVerdict::Kind::Better ? "better"
                                                                : "can't tell";
    if (!q.seedNoiseKnown())
        return tr("%1: %2 (±%3 tolerance), %4 vs %5 seeds")
            .arg(tr(word), signedNats(q.difference))
            .arg(q.tolerance)
            .arg(q.seeds)
            .arg(q.baselineSeeds);
    return tr("%1: %2 ± %3, %4 vs %5 seeds")
        .arg(tr(word), signedNats(q.difference))
        .arg(q.halfWidth, 0, 'f', 4)
        .arg(q.seeds)
        .arg(q.baselineSeeds);
}

QString DecisionSummary::speedText(const ComparisonRow &row)
{
    QString text = QString::fromStdString(speedCell(row));
    if (row.speedCall == SpeedCall::TooNoisy)
        text += tr(", too noisy");
    return text;
}

QString DecisionSummary::memoryText(const ComparisonRow &row)
{
    if (row.peakBytes <= 0)
        return QStringLiteral("–");
    if (row.action == Action::Baseline)
        return QString::fromStdString(formatBytes(row.peakBytes));
    if (std::fabs(row.memorySaved) < 0.005)
        return tr("same");
    return row.memorySaved > 0 ? tr("saves %1%").arg(row.memorySaved * 100, 0, 'f', 0)
                               : tr("%1% more").arg(-row.memorySaved * 100, 0, 'f', 0);
}

void DecisionSummary::setRows(const std::vector<ComparisonRow> &rows)
{
    setRowCount(0);
    for (const ComparisonRow &r : rows) {
        const int row = rowCount();
        insertRow(row);
        const QString verdict = r.action == Action::Baseline ? tr("the baseline every other line is judged against")
                                                             : QString::fromStdString(r.verdict);
        const QString name = QString::fromStdString(r.name);
        const auto put = [&](int column, const QString &text, Qt::Alignment alignment) {
            auto *item = new QTableWidgetItem(text);
            item->setTextAlignment(alignment | Qt::AlignVCenter);
            item->setToolTip(QStringLiteral("<b>%1</b>: %2").arg(name.toHtmlEscaped(), verdict.toHtmlEscaped()));
            setItem(row, column, item);
            return item;
        };
        put(Technique, name, Qt::AlignLeft);
        put(Quality, qualityText(r), Qt::AlignLeft);
        put(Speed, speedText(r), Qt::AlignRight);
        put(Memory, memoryText(r), Qt::AlignRight);
        QTableWidgetItem *action = put(Action, QString::fromLatin1(actionText(r.action)), Qt::AlignLeft);
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
