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
    void setRows(const std::vector<ComparisonRow> &rows); // the baseline's first

    // "same quality: +0.0100 ± 0.0080, 3 vs 3 seeds"; "1.30× (1.25–1.34)"; "saves 30%".
    static QString qualityText(const ComparisonRow &row);
    static QString speedText(const ComparisonRow &row);
    static QString memoryText(const ComparisonRow &row);

protected:
    void resizeEvent(QResizeEvent *event) override;

private:
    void fitColumns();
};

} // namespace optlog
