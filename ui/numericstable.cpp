// SPDX-License-Identifier: MIT
#include "ui/numericstable.h"

#include "ui/charts/charttheme.h"

#include <QHeaderView>
#include <QScrollBar>
#include <iterator>

namespace optlog {

namespace {
constexpr int kStepColumn = 0;
constexpr int kFirstRiskColumn = 1;
} // namespace

NumericsTable::NumericsTable(QWidget *parent)
    : QTableWidget(0, kFirstRiskColumn + int(std::size(kNumericsRisks)), parent)
{
    QStringList titles = {tr("At step")};
    for (NumericsRisk risk : kNumericsRisks)
        titles << tr(riskTitle(risk));
    setHorizontalHeaderLabels(titles);
    horizontalHeaderItem(kFirstRiskColumn)
        ->setToolTip(tr("Share of all gradient elements below FP16's smallest subnormal, 2^-24: zero in FP16 "
                        "without a loss scaler. Fine under 0.1%, trouble from 1%."));
    horizontalHeaderItem(kFirstRiskColumn + 1)
        ->setToolTip(tr("The same share at the scale a dynamic loss scaler would hold: what is left to lose with "
                        "one"));
    horizontalHeaderItem(kFirstRiskColumn + 2)
        ->setToolTip(tr("Share of AdamW's updates smaller than half a BF16 ulp of their weight: lost when added "
                        "to a BF16 weight without FP32 masters. Fine under 1%, trouble from 10%."));
    horizontalHeaderItem(kFirstRiskColumn + 3)
        ->setToolTip(tr("A block's largest activation against FP16's largest value, 65504. Fine under a tenth of "
                        "it, trouble from half."));
    setEditTriggers(QAbstractItemView::NoEditTriggers);
    setSelectionMode(QAbstractItemView::NoSelection);
    setFocusPolicy(Qt::NoFocus);
    horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    horizontalHeader()->setStretchLastSection(true);
    setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
}

void NumericsTable::setRows(const std::vector<ComparisonRow> &rows)
{
    setRowCount(0);
    QStringList runs;
    for (const ComparisonRow &r : rows) {
        if (!r.risks.measured())
            continue;
        const int row = rowCount();
        insertRow(row);
        runs << QString::fromStdString(r.name);
        auto *step = new QTableWidgetItem(QString::number(r.risks.step));
        step->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        step->setToolTip(QString::fromStdString(r.numerics));
        setItem(row, kStepColumn, step);
        for (size_t i = 0; i < std::size(kNumericsRisks); ++i) {
            const NumericsRisk risk = kNumericsRisks[i];
            const double value = riskValue(r.risks, risk);
            auto *cell = new QTableWidgetItem(QString::fromStdString(riskValueText(risk, value)));
            cell->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            if (const QColor tint = riskColor(riskLevel(risk, value)); tint.isValid()) {
                cell->setBackground(tint);
                cell->setForeground(QColor(Qt::black));
            }
            const std::string worst = riskWorstTensor(r.risks, risk);
            cell->setToolTip(worst.empty() ? tr("not measured for this run")
                                           : tr("worst tensor: %1").arg(QString::fromStdString(worst)));
            setItem(row, kFirstRiskColumn + int(i), cell);
        }
    }
    // The run names as the rows' headers: they stay in view when the table scrolls sideways.
    setVerticalHeaderLabels(runs);
    resizeRowsToContents();
    int height = horizontalHeader()->sizeHint().height() + 2 * frameWidth()
                 + horizontalScrollBar()->sizeHint().height();
    for (int row = 0; row < rowCount(); ++row)
        height += rowHeight(row);
    setFixedHeight(height);
    setVisible(rowCount() > 0);
}

QString NumericsTable::runOfRow(int row) const
{
    const QTableWidgetItem *header = verticalHeaderItem(row);
    return header ? header->text() : QString();
}

} // namespace optlog
