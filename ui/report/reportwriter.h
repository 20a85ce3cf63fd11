// SPDX-License-Identifier: MIT
#pragma once

#include "core/analysis/report.h"

#include <QString>
#include <QStringList>
#include <optional>
#include <stdexcept>

namespace optlog {

// From a file name's suffix (reportFormatNamed), as the GUI's save dialog gives it.
std::optional<ReportFormat> reportFormatOfPath(const QString &path);

class ReportWriteError : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

// Writes `report` to `path`: HTML as one self-contained file (charts inline); PDF through Qt's
// PDF writer, A4, paginated by the text layout; Markdown with its chart images in
// "<name>_files/" beside it; CSV as the summary table at `path` and every step's metrics in
// "<name>-metrics.csv"; JSON with everything. The charts are the Compare view's own classes,
// rendered offscreen, so this needs a QApplication. Returns the files written.
QStringList writeReport(const Report &report, ReportFormat format, const QString &path);

} // namespace optlog
