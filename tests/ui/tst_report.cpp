// SPDX-License-Identifier: MIT
// Reports from a real small study made by the engine: every format, read back for content.
#include "core/analysis/report.h"
#include "core/store/store.h"
#include "tests/common/testpaths.h"
#include "ui/report/reportwriter.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

using namespace optlog;

namespace {

int runOptlog(const QStringList &arguments, QString *err = nullptr)
{
    QProcess process;
    process.start(optlog::testing::optlogBinary(), arguments);
    if (!process.waitForFinished(180000))
        return -1;
    if (err)
        *err = QString::fromUtf8(process.readAllStandardError());
    return process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
}

QString readAll(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
}

const QStringList kRuns = {QStringLiteral("fp32"), QStringLiteral("master-bf16"), QStringLiteral("tight-budget")};

} // namespace

class tst_Report : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_study = m_dir.filePath(QStringLiteral("small.sqlite"));
        const QStringList smoke = {"run", "--db", m_study, "--preset", "smoke", "--set", "data.corpus=generated"};
        QCOMPARE(runOptlog(smoke + QStringList{"--set", "name=fp32"}), 0);
        QCOMPARE(runOptlog(smoke + QStringList{"--set", "name=master-bf16", "--set", "precision.mode=master-bf16"}), 0);
        // A budget far below what the model needs: the run ends as oom, and the report must say so.
        QCOMPARE(runOptlog(smoke
                           + QStringList{"--set", "name=tight-budget", "--set", "memory.budget=\"1MiB\"", "--force"}),
                 5);
        const Store store(m_study.toStdString(), Store::Access::ReadOnly);
        m_report = buildReport(store, {}, "fp32", 0.02);
    }

    void reportModelHoldsEveryRunBaselineFirst()
    {
        QCOMPARE(int(m_report.runs.size()), 3);
        QCOMPARE(m_report.runs[0].summary.run.name, std::string("fp32"));
        QCOMPARE(std::string(outcomeName(m_report.runs[2].summary.run.outcome)), std::string("oom"));
        QVERIFY2(m_report.runs[2].outcomeText.rfind("oom", 0) == 0, m_report.runs[2].outcomeText.c_str());
        // master-bf16 differs from the baseline in its precision only, and says so.
        QCOMPARE(int(m_report.runs[1].changes.size()), 1);
        QCOMPARE(m_report.runs[1].changes[0].path, std::string("precision.mode"));
        // Dtypes are read from the run's tensors.
        const auto &dtypes = m_report.runs[1].dtypes;
        QVERIFY(std::find(dtypes.begin(), dtypes.end(), std::pair<std::string, std::string>{"master weights", "float32"})
                != dtypes.end());
        QVERIFY(std::find(dtypes.begin(), dtypes.end(), std::pair<std::string, std::string>{"weights", "bfloat16"})
                != dtypes.end());
    }

    void markdownWithItsImagesBeside()
    {
        const QString path = m_dir.filePath(QStringLiteral("report.md"));
        const QStringList files = writeReport(m_report, ReportFormat::Markdown, path);
        QCOMPARE(files.size(), 9); // the report and eight charts, the last the memory timelines
        const QString text = readAll(path);
        QVERIFY(text.contains(QStringLiteral("## Verdicts")));
        QVERIFY(text.indexOf(QStringLiteral("## Verdicts")) < text.indexOf(QStringLiteral("## Charts")));
        QVERIFY(
            text.contains(QStringLiteral("| Run | Seeds | Outcome | Val loss at matched tokens | Δ vs baseline |")));
        QVERIFY(text.contains(QStringLiteral("## Stability and 16-bit numerics")));
        for (const QString &run : kRuns)
            QVERIFY2(text.contains(QStringLiteral("| ") + run), qPrintable(run));
        QVERIFY(text.contains(QStringLiteral("| master weights | float32 |")));
        QVERIFY(text.contains(QStringLiteral("| Adam m, v | float32 |")));
        QVERIFY(text.contains(QStringLiteral("did not complete (oom")));
        QVERIFY(text.contains(QStringLiteral("](report_files/chart-1.png)")));
        QVERIFY(text.contains(
            QStringLiteral("Memory over the first measured step, aligned by phase](report_files/chart-8.png)")));
        for (int i = 1; i <= 8; ++i) {
            QImage chart(m_dir.filePath(QStringLiteral("report_files/chart-%1.png").arg(i)));
            QVERIFY2(!chart.isNull() && chart.width() >= 900, qPrintable(QString::number(i)));
        }
    }

    void htmlIsOneSelfContainedFile()
    {
        const QString path = m_dir.filePath(QStringLiteral("report.html"));
        writeReport(m_report, ReportFormat::Html, path);
        const QString text = readAll(path);
        QCOMPARE(text.count(QStringLiteral("src=\"data:image/png;base64,")), 8);
        QVERIFY(text.contains(QStringLiteral("Memory over the first measured step, aligned by phase")));
        QVERIFY2(!text.contains(QStringLiteral("http://")) && !text.contains(QStringLiteral("https://")),
                 "no network references");
        QVERIFY(!text.contains(QStringLiteral("<script")));
        QVERIFY(text.contains(QStringLiteral("<table class=\"verdicts\"")));
        for (const QString &run : kRuns)
            QVERIFY(text.contains(QStringLiteral("<td>") + run));
        QVERIFY(text.contains(QStringLiteral("<td>master weights</td><td>float32</td>")));
        QVERIFY(text.contains(QStringLiteral("<td>LibTorch</td>")));
    }

    void pdfReadsBackAsText()
    {
        const QString path = m_dir.filePath(QStringLiteral("report.pdf"));
        writeReport(m_report, ReportFormat::Pdf, path);
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(file.read(5), QByteArray("%PDF-"));
        const QString pdftotext = QStandardPaths::findExecutable(QStringLiteral("pdftotext"));
        if (pdftotext.isEmpty())
            QSKIP("pdftotext (poppler-utils, installed by packaging/setup.sh) is needed to read the PDF back");
        QProcess process;
        process.start(pdftotext, {QStringLiteral("-layout"), path, QStringLiteral("-")});
        QVERIFY(process.waitForFinished(30000));
        const QString text = QString::fromUtf8(process.readAllStandardOutput());
        QVERIFY2(text.contains(QStringLiteral("Verdicts")), qPrintable(text.left(500)));
        for (const QString &run : kRuns)
            QVERIFY2(text.contains(run), qPrintable(run));
        QVERIFY(text.contains(QStringLiteral("master weights")));
        QVERIFY(text.contains(QStringLiteral("Environment")));
        QVERIFY2(text.count(QLatin1Char('\f')) >= 2, "paginated: more than one page");
    }

    void csvSummaryAndMetrics()
    {
        const QString path = m_dir.filePath(QStringLiteral("report.csv"));
        const QStringList files = writeReport(m_report, ReportFormat::Csv, path);
        QCOMPARE(files, (QStringList{path, m_dir.filePath(QStringLiteral("report-metrics.csv"))}));
        const QStringList summary = readAll(path).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QCOMPARE(summary.size(), 4);
        QVERIFY(
            summary[0].startsWith(QStringLiteral("run,baseline,seeds,completed,outcome,matched_tokens,validation_loss,"
                                                 "validation_sd,delta_loss,delta_half_width_95")));
        QVERIFY(summary[1].startsWith(QStringLiteral("fp32,true,1,1,completed,")));
        QVERIFY(summary[3].startsWith(QStringLiteral("tight-budget,false,1,0,\"oom"))
                || summary[3].startsWith(QStringLiteral("tight-budget,false,1,0,oom")));
        const QStringList metrics = readAll(files[1]).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QCOMPARE(metrics.size(), 1 + 40 + 40 + int(m_report.runs[2].metrics.size()));
    }

    void jsonForOtherTools()
    {
        const QString path = m_dir.filePath(QStringLiteral("report.json"));
        writeReport(m_report, ReportFormat::Json, path);
        const QJsonObject root = QJsonDocument::fromJson(readAll(path).toUtf8()).object();
        QCOMPARE(root.value(QStringLiteral("baseline")).toString(), QStringLiteral("fp32"));
        const QJsonArray runs = root.value(QStringLiteral("runs")).toArray();
        QCOMPARE(runs.size(), 3);
        QCOMPARE(runs[1]
                     .toObject()
                     .value(QStringLiteral("dtypes"))
                     .toObject()
                     .value(QStringLiteral("master weights"))
                     .toString(),
                 QStringLiteral("float32"));
        QCOMPARE(runs[1].toObject().value(QStringLiteral("metrics")).toArray().size(), 40);
        QCOMPARE(runs[2].toObject().value(QStringLiteral("outcome")).toString(), QStringLiteral("oom"));
        // Each run's memory timelines, as the study holds them; the oom run's first step ends where it failed.
        QCOMPARE(runs[0].toObject().value(QStringLiteral("memory_timelines")).toArray().size(), 2);
        QCOMPARE(runs[2].toObject().value(QStringLiteral("memory_timelines")).toArray().size(), 1);
        QVERIFY(root.value(QStringLiteral("environment")).toObject().contains(QStringLiteral("LibTorch")));
    }

    void cliWritesAReportAndNamesAMissingRun()
    {
        const QString path = m_dir.filePath(QStringLiteral("cli.md"));
        QCOMPARE(runOptlog({"report", m_study, "--runs", "fp32,master-bf16", "--baseline", "fp32", "--format", "md",
                            "-o", path}),
                 0);
        const QString text = readAll(path);
        QVERIFY(text.contains(QStringLiteral("| master-bf16 |")));
        QVERIFY(!text.contains(QStringLiteral("tight-budget")));
        QString err;
        QCOMPARE(runOptlog({"report", m_study, "--runs", "fp32,nope", "-o", m_dir.filePath(QStringLiteral("x.html"))},
                           &err),
                 2);
        QVERIFY2(err.contains(QStringLiteral("no run or group 'nope'")), qPrintable(err));
        QVERIFY(!QFile::exists(m_dir.filePath(QStringLiteral("x.html"))));
    }

private:
    QTemporaryDir m_dir;
    QString m_study;
    Report m_report;
};

QTEST_MAIN(tst_Report)
#include "tst_report.moc"
