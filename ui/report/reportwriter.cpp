// SPDX-License-Identifier: MIT
#include "ui/report/reportwriter.h"

#include "ui/charts/comparisoncharts.h"
#include "ui/charts/stackedbarchart.h"
#include "ui/charts/timelinechart.h"

#include <QBuffer>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QPageLayout>
#include <QPageSize>
#include <QPdfWriter>
#include <QTextDocument>
#include <QUrl>
#include <cmath>

namespace optlog {

namespace {

struct RenderedChart
{
    QString title;
    QImage image;
    bool wide = false;
};

// The Compare view's charts for the report's runs, drawn offscreen at a size that reads well
// on a page.
QList<RenderedChart> renderCharts(const Report &report)
{
    QList<ChartGroup> groups;
    for (const auto &row : report.groups) {
        GroupSummary runs{row.name, {}};
        for (const auto &run : report.runs)
            if (run.group == row.name)
                runs.replicates.push_back(run.summary);
        groups << chartGroup(row, runs);
    }
    ComparisonCharts charts;
    charts.fill(groups);
    QList<RenderedChart> rendered;
    for (QWidget *chart : charts.filledCharts()) {
        const bool wide = chart == charts.memory;
        chart->resize(wide ? 1400 : 900, std::max(chart->minimumHeight(), 520));
        // Never shown: grab() delivers the pending resize, and the chart lays itself out for it.
        rendered << RenderedChart{charts.title(chart), chart->grab().toImage(), wide};
    }
    // When in a step each run's memory peaks: the Memory page's chart, every run overlaid.
    QList<TimelineChart::Shown> shown;
    for (const auto &run : report.runs)
        for (const MemoryTimeline &timeline : run.summary.timelines)
            if (timeline.measuredStep)
                shown << TimelineChart::shownOf(run.summary, timeline, int(shown.size()));
    if (!shown.isEmpty()) {
        const QString title = QObject::tr("Memory over the first measured step, aligned by phase");
        TimelineChart timeline(title);
        timeline.resize(1400, 620);
        timeline.setTimelines(shown);
        rendered << RenderedChart{title, timeline.grab().toImage(), true};
    }
    return rendered;
}

QByteArray png(const QImage &image)
{
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    image.save(&buffer, "PNG");
    return bytes;
}

void writeFile(const QString &path, const QByteArray &bytes)
{
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate) || file.write(bytes) != bytes.size())
        throw ReportWriteError("cannot write " + path.toStdString() + ": " + file.errorString().toStdString());
}

QString siblingPath(const QString &path, const QString &suffix)
{
    const QFileInfo info(path);
    return QDir(info.absolutePath()).filePath(info.completeBaseName() + suffix);
}

QStringList writeHtml(const Report &report, const QString &path)
{
    std::vector<ReportChart> charts;
    for (const auto &chart : renderCharts(report))
        charts.push_back({chart.title.toStdString(),
                          "data:image/png;base64," + png(chart.image).toBase64().toStdString(), chart.wide});
    writeFile(path, QByteArray::fromStdString(reportHtml(report, charts)));
    return {path};
}

QStringList writeMarkdown(const Report &report, const QString &path)
{
    const QString folderName = QFileInfo(path).completeBaseName() + QStringLiteral("_files");
    const QString folder = QDir(QFileInfo(path).absolutePath()).filePath(folderName);
    if (!QDir().mkpath(folder))
        throw ReportWriteError("cannot create " + folder.toStdString());
    QStringList written;
    std::vector<ReportChart> charts;
    int index = 0;
    for (const auto &chart : renderCharts(report)) {
        const QString name = QStringLiteral("chart-%1.png").arg(++index);
        writeFile(QDir(folder).filePath(name), png(chart.image));
        written << QDir(folder).filePath(name);
        charts.push_back({chart.title.toStdString(), (folderName + QLatin1Char('/') + name).toStdString()});
    }
    writeFile(path, QByteArray::fromStdString(reportMarkdown(report, charts)));
    written.prepend(path);
    return written;
}

QStringList writePdf(const Report &report, const QString &path)
{
    QPdfWriter pdf(path);
    pdf.setPageSize(QPageSize(QPageSize::A4));
    pdf.setPageMargins(QMarginsF(15, 15, 15, 15), QPageLayout::Millimeter);
    pdf.setResolution(150);
    pdf.setTitle(QStringLiteral("optlog report: %1").arg(QString::fromStdString(report.study)));
    pdf.setCreator(QStringLiteral("optlog"));

    QTextDocument document;
    const QSizeF page = pdf.pageLayout().paintRectPixels(pdf.resolution()).size();
    document.setPageSize(page);
    // QTextDocument knows no CSS widths for images: each chart gets the page's width in pixels.
    std::vector<ReportChart> charts;
    int index = 0;
    for (const auto &chart : renderCharts(report)) {
        const QString name = QStringLiteral("chart-%1.png").arg(++index);
        document.addResource(QTextDocument::ImageResource, QUrl(name),
                             chart.image.scaledToWidth(int(page.width() * 0.92), Qt::SmoothTransformation));
        charts.push_back({chart.title.toStdString(), name.toStdString()});
    }
    QFont font(QStringLiteral("DejaVu Sans"));
    font.setPointSizeF(8.5);
    document.setDefaultFont(font);
    document.setHtml(QString::fromStdString(reportHtml(report, charts)));
    document.print(&pdf);
    if (!QFileInfo(path).isFile() || QFileInfo(path).size() == 0)
        throw ReportWriteError("cannot write " + path.toStdString());
    return {path};
}

} // namespace

std::optional<ReportFormat> reportFormatOfPath(const QString &path)
{
    return reportFormatNamed(QFileInfo(path).suffix().toStdString());
}

QStringList writeReport(const Report &report, ReportFormat format, const QString &path)
{
    switch (format) {
    case ReportFormat::Html: return writeHtml(report, path);
    case ReportFormat::Pdf: return writePdf(report, path);
    case ReportFormat::Markdown: return writeMarkdown(report, path);
    case ReportFormat::Csv: {
        const QString metrics = siblingPath(path, QStringLiteral("-metrics.csv"));
        writeFile(path, QByteArray::fromStdString(reportSummaryCsv(report)));
        writeFile(metrics, QByteArray::fromStdString(reportMetricsCsv(report)));
        return {path, metrics};
    }
    case ReportFormat::Json: writeFile(path, QByteArray::fromStdString(reportJson(report))); return {path};
    }
    return {};
}

} // namespace optlog
