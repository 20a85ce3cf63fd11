// SPDX-License-Identifier: MIT
// `optlog report`: a comparison someone else can check, as HTML, PDF, Markdown, CSV or JSON.
// HTML, PDF and Markdown draw the workbench's charts, so they need a build with Qt
// (OPTLOG_BUILD_GUI); CSV and JSON are written by the core alone.
#include "app/cli.h"
#include "app/commands.h"
#include "core/analysis/report.h"
#include "core/store/store.h"

#ifdef OPTLOG_WITH_QT_REPORTS
#include "ui/report/reportwriter.h"

#include <QApplication>
#endif

#include <cstdlib>
#include <fstream>
#include <iostream>

namespace optlog {

namespace {

struct ReportRequest
{
    std::string study;
    std::vector<std::string> runs; // names or ids; empty = every run
    std::string baseline;          // name or id; empty = the first run
    double tolerance = 0.02;       // nats per token
    std::string format = "html";   // one of reportFormatNames()
    std::string output;            // empty = <study>-report.<format>
};

#ifndef OPTLOG_WITH_QT_REPORTS
bool writeText(const std::string &path, const std::string &text)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    return bool(out);
}
#endif

std::string withSuffix(const std::string &path, const std::string &suffix)
{
    const auto dot = path.find_last_of('.');
    const auto slash = path.find_last_of('/');
    const bool hasExtension = dot != std::string::npos && (slash == std::string::npos || dot > slash);
    return (hasExtension ? path.substr(0, dot) : path) + suffix;
}

// "csv and json": the formats that draw no chart, which a build without Qt writes.
[[maybe_unused]] std::string textFormats()
{
    std::string text;
    for (const std::string &name : reportFormatNames())
        if (!drawsCharts(*reportFormatNamed(name)))
            text += (text.empty() ? "" : " and ") + name;
    return text;
}

int reportCommand(const ReportRequest &request, int argc, char **argv)
{
    Report report;
    try {
        const Store store(request.study, Store::Access::ReadOnly);
        report = buildReport(store, request.runs, request.baseline, request.tolerance);
    } catch (const std::exception &e) {
        std::cerr << "optlog report: " << e.what() << "\n";
        return kExitBadInput;
    }
    // The option's check let only reportFormatNames() through.
    const ReportFormat format = reportFormatNamed(request.format).value_or(ReportFormat::Html);
    const std::string output = request.output.empty() ? withSuffix(request.study, "-report." + request.format)
                                                      : request.output;
#ifdef OPTLOG_WITH_QT_REPORTS
    // Charts are drawn offscreen: no display is needed, and none is opened when there is one.
    if (std::getenv("QT_QPA_PLATFORM") == nullptr)
        setenv("QT_QPA_PLATFORM", "offscreen", 0);
    QApplication app(argc, argv);
    try {
        for (const QString &file : writeReport(report, format, QString::fromStdString(output)))
            std::cout << file.toStdString() << "\n";
    } catch (const std::exception &e) {
        std::cerr << "optlog report: " << e.what() << "\n";
        return kExitFailed;
    }
    return kExitOk;
#else
    (void) argc;
    (void) argv;
    if (format == ReportFormat::Csv) {
        const std::string metrics = withSuffix(output, "-metrics.csv");
        if (!writeText(output, reportSummaryCsv(report)) || !writeText(metrics, reportMetricsCsv(report))) {
            std::cerr << "optlog report: cannot write " << output << "\n";
            return kExitFailed;
        }
        std::cout << output << "\n" << metrics << "\n";
        return kExitOk;
    }
    if (format == ReportFormat::Json) {
        if (!writeText(output, reportJson(report))) {
            std::cerr << "optlog report: cannot write " << output << "\n";
            return kExitFailed;
        }
        std::cout << output << "\n";
        return kExitOk;
    }
    std::cerr << "optlog report: --format " << request.format
              << " draws charts and needs optlog built with Qt (-DOPTLOG_BUILD_GUI=ON); " << textFormats()
              << " work in this build\n";
    return kExitBadInput;
#endif
}

} // namespace

std::string reportAbility()
{
#ifdef OPTLOG_WITH_QT_REPORTS
    return "reports with charts";
#else
    return "reports without charts (" + textFormats() + " only)";
#endif
}

Command addReportCommand(CLI::App &app, const Invocation &invocation)
{
    auto request = std::make_shared<ReportRequest>();
    CLI::App *command = app.add_subcommand("report", "write a comparison report: verdicts, charts, per-run detail, "
                                                     "environment");
    command->add_option("study", request->study, "study file")->required();
    command->add_option("--runs", request->runs, "runs to report (names or ids); default all")->delimiter(',');
    command->add_option("--baseline", request->baseline, "baseline run (name or id); default the first run");
    command
        ->add_option("--tolerance", request->tolerance,
                     "validation-loss difference counted as noise, "
                     "nats per token")
        ->capture_default_str()
        ->check(toleranceCheck());
    std::string formats;
    for (const std::string &name : reportFormatNames())
        formats += (formats.empty() ? "" : ", ") + name;
    command->add_option("--format", request->format, formats)
        ->check(CLI::IsMember(reportFormatNames()))
        ->capture_default_str();
    command->add_option("-o,--output", request->output, "output file; default <study>-report.<format>");
    return {command, [request, invocation] { return reportCommand(*request, invocation.argc, invocation.argv); }};
}

} // namespace optlog
