// SPDX-License-Identifier: MIT
#pragma once

#include "core/analysis/comparison.h"

#include <QTableWidget>
#include <vector>

namespace optlog {

// The decision first: one line per technique against the baseline, above every detail and never
// wider than its pane. The name and the quality elide where room runs out; every cell shows the
// whole verdict on hover. The action is tinted: green to take, amber to look again, red to leave.
class DecisionSummary : public QTableWidget
{
    Q_OBJECT
public:
    enum Column { Technique, Quality, Speed, Memory, Action, ColumnCount };

    explicit DecisionSummary(QWidget *parent = nullptr);
    // The baseline's first; the cells are decisionCells' (the terminal's words), the tooltip the verdict.
    void setRows(const std::vector<ComparisonRow> &rows);

protected:
    void resizeEvent(QResizeEvent *event) override;

private:
    void fitColumns();
};

} // namespace optlog
