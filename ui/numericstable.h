// SPDX-License-Identifier: MIT
#pragma once

#include "core/analysis/comparison.h"

#include <QTableWidget>
#include <vector>

namespace optlog {

// What FP16 and BF16 would do to each compared run, as a table instead of a paragraph per run:
// a row per run that measured its numerics, a column per risk (FP16 underflow without a scaler
// and with one, BF16's lost updates, the largest activation against FP16's maximum). Each cell
// is coloured by how close it is to trouble and names the worst tensor on hover.
class NumericsTable : public QTableWidget
{
    Q_OBJECT
public:
    explicit NumericsTable(QWidget *parent = nullptr);
    void setRows(const std::vector<ComparisonRow> &rows); // hides itself when no run measured any
    // The run of a row, for tests and tooltips.
    QString runOfRow(int row) const;
};

} // namespace optlog
