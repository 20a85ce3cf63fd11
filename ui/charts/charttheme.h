// SPDX-License-Identifier: MIT
#pragma once

#include <QColor>

class QChart;

namespace optlog {

// The same run keeps the same colour in every chart of a view: colours follow the order in
// which the runs are handed to the charts.
QColor runColor(int index);
// Titles, margins, fonts and legend shared by every chart.
void applyChartStyle(QChart *chart);

} // namespace optlog
