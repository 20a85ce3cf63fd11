// SPDX-License-Identifier: MIT
// `optlog` as the `optlog` package alone installs it on a laptop: no optlog-engine beside it, no
// LibTorch. The commands that read, compare, report, curate and record a study work on a study the
// engine wrote; each command that trains or measures says what to install and writes nothing; and no
// binary the package holds links LibTorch. Runs in the build with the engine too (the binary
// copied to a folder of its own) and in the build without it (OPTLOG_WITH_ENGINE=OFF).
#include "tests/common/files.h"
#include "tests/common/studyfixture.h"
#include "tests/common/testpaths.h"

#ifdef OPTLOG_TEST_WORKBENCH
#include "ui/runplacechooser.h"

#include <QComboBox>
#include <QLabel>
#include <QStandardItemModel>
#endif

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

namespace {

struct Result
{
    int exitCode = -1;
    QString out;
    QString err;
};

} // namespace

using optlog::testing::filesUnder;

class tst_Laptop : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void theStudyCommandsWorkWithoutTheEngine();
    void eachCommandThatTrainsSaysWhatToInstall_data();
    void eachCommandThatTrainsSaysWhatToInstall();
    void itsBinariesLinkNoLibTorch();
#ifdef OPTLOG_TEST_WORKBENCH
    void theWorkbenchOffersNoPlaceHereWithoutTheEngine();
#endif

private:
    Result optlog(const QStringList &arguments, const QString &folder = {});

    QTemporaryDir m_dir;
    QString m_optlog; // the binary alone, in a folder of its own
    QString m_study;
};

void tst_Laptop::initTestCase()
{
    QVERIFY(m_dir.isValid());
    QVERIFY(QDir(m_dir.path()).mkpath("bin"));
    m_optlog = m_dir.filePath("bin/optlog");
    QVERIFY(QFile::copy(optlog::testing::optlogBinary(), m_optlog));
    QVERIFY(QFile::setPermissions(m_optlog, QFile::permissions(m_optlog) | QFileDevice::ExeOwner));
    m_study = m_dir.filePath("study.sqlite");
    optlog::Store store(m_study.toStdString());
    optlog::testing::addFullRun(store, "baseline", "fp32", 0.0);
    optlog::testing::addFullRun(store, "bf16", "autocast-bf16", 0.01);
}

Result tst_Laptop::optlog(const QStringList &arguments, const QString &folder)
{
    QProcess process;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert("XDG_DATA_HOME", m_dir.filePath("data")); // the default study, if one is made
    process.setProcessEnvironment(environment);
    process.setWorkingDirectory(folder.isEmpty() ? m_dir.path() : folder);
    process.start(m_optlog, arguments);
    if (!process.waitForFinished(120000) || process.exitStatus() != QProcess::NormalExit)
        return {};
    return {process.exitCode(), QString::fromUtf8(process.readAllStandardOutput()),
            QString::fromUtf8(process.readAllStandardError())};
}

void tst_Laptop::theStudyCommandsWorkWithoutTheEngine()
{
    const Result version = optlog({"--version"});
    QCOMPARE(version.exitCode, 0);
    QVERIFY2(version.out.contains("without its engine") && !version.out.contains("LibTorch 1")
                 && !version.out.contains("LibTorch 2"),
             qPrintable(version.out));

    const Result runs = optlog({"runs", m_study});
    QCOMPARE(runs.exitCode, 0);
    QVERIFY2(runs.out.contains("baseline") && runs.out.contains("bf16"), qPrintable(runs.out));
    const Result show = optlog({"show", m_study, "bf16"});
    QCOMPARE(show.exitCode, 0);
    QVERIFY2(show.out.contains("autocast-bf16"), qPrintable(show.out));
    const Result compare = optlog({"compare", m_study, "--baseline", "baseline"});
    QVERIFY2(compare.exitCode == 0, qPrintable(compare.err));
    QVERIFY2(compare.out.contains("bf16"), qPrintable(compare.out));
    QCOMPARE(optlog({"export", m_study, "--format", "csv", "-o", m_dir.filePath("metrics.csv")}).exitCode, 0);
    QVERIFY(QFileInfo(m_dir.filePath("metrics.csv")).size() > 0);

    // The built-in model's memory, by the memory model's default terms (as the Design page's).
    const Result estimate = optlog({"estimate", "--preset", "smoke"});
    QCOMPARE(estimate.exitCode, 0);
    QVERIFY2(estimate.out.contains("parameters") && estimate.err.contains("not calibrated"),
             qPrintable(estimate.out + estimate.err));

    // The report in every format this build writes: PDF and HTML with charts where Qt is built in.
    const Result features = optlog({"--version"});
    QStringList formats = {"csv", "json"};
    if (features.out.contains("reports with charts"))
        formats << "html"
                << "pdf"
                << "md";
    for (const QString &format : formats) {
        const QString output = m_dir.filePath("report." + format);
        const Result report = optlog({"report", m_study, "--format", format, "-o", output});
        QVERIFY2(report.exitCode == 0, qPrintable(format + ": " + report.err));
        QVERIFY2(QFileInfo(output).size() > 0, qPrintable(format));
    }

    // A run your own trainer reports, recorded: without the engine's matmul peak, so no MFU, and
    // `optlog record` says what would measure one.
    QProcess record;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert("XDG_DATA_HOME", m_dir.filePath("data"));
    record.setProcessEnvironment(environment);
    record.start(m_optlog, {"record", "--db", m_study});
    QVERIFY(record.waitForStarted());
    record.write(R"({"event":"started","format":1,"name":"mine","steps":2,"environment":{"model_flops":1000}})"
                 "\n"
                 R"({"event":"step","step":0,"tokens":64,"train_loss":5.0,"step_seconds":0.5,"tokens_per_second":128})"
                 "\n"
                 R"({"event":"step","step":1,"tokens":128,"train_loss":4.5,"step_seconds":0.5,"tokens_per_second":128})"
                 "\n"
                 R"({"event":"finished","outcome":"completed"})"
                 "\n");
    record.closeWriteChannel();
    QVERIFY(record.waitForFinished(60000));
    const QString recorded = QString::fromUtf8(record.readAllStandardError());
    QVERIFY2(record.exitCode() == 0, qPrintable(recorded));
    QVERIFY2(recorded.contains("completed") && recorded.contains("needs optlog-engine"), qPrintable(recorded));
    QCOMPARE(optlog::Store(m_study.toStdString(), optlog::Store::Access::ReadOnly).runs().size(), size_t(3));
    QCOMPARE(optlog({"delete", m_study, "mine", "--yes"}).exitCode, 0);

    // Curation, each a change the study keeps.
    QCOMPARE(optlog({"note", m_study, "bf16", "kept: half the memory"}).exitCode, 0);
    QCOMPARE(optlog({"tag", m_study, "bf16", "+keep"}).exitCode, 0);
    QCOMPARE(optlog({"rename", m_study, "bf16", "bf16 autocast"}).exitCode, 0);
    QCOMPARE(optlog({"archive", m_study, "baseline"}).exitCode, 0);
    QCOMPARE(optlog({"archive", m_study, "baseline", "--undo"}).exitCode, 0);
    const QString other = m_dir.filePath("other.sqlite");
    QCOMPARE(optlog({"copy", m_study, "bf16 autocast", other}).exitCode, 0);
    QCOMPARE(optlog({"delete", other, "bf16 autocast", "--yes"}).exitCode, 0);
    QCOMPARE(optlog({"vacuum", other}).exitCode, 0);
    QCOMPARE(optlog({"prune", m_study}).exitCode, 0);
    const optlog::Store study(m_study.toStdString(), optlog::Store::Access::ReadOnly);
    const std::vector<optlog::RunRecord> stored = study.runs();
    QCOMPARE(stored.size(), size_t(2));
    QCOMPARE(stored.at(1).name, std::string("bf16 autocast"));
    QCOMPARE(stored.at(1).note, std::string("kept: half the memory"));
    QCOMPARE(stored.at(1).tags, std::vector<std::string>{"keep"});
    QCOMPARE(optlog::Store(other.toStdString(), optlog::Store::Access::ReadOnly).runs().size(), size_t(0));
}

void tst_Laptop::eachCommandThatTrainsSaysWhatToInstall_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::newRow("run") << QStringList{"run", "--preset", "smoke", "--db", "new.sqlite"};
    QTest::newRow("run, the default study") << QStringList{"run"};
    QTest::newRow("study") << QStringList{"study", "default", "--db", "new.sqlite"};
    QTest::newRow("tune") << QStringList{"tune", "--if-needed"};
    QTest::newRow("tune --peak-only") << QStringList{"tune", "--peak-only"};
    QTest::newRow("fit") << QStringList{"fit", "--preset", "smoke", "--memory-budget", "64MiB"};
    QTest::newRow("estimate for a GPU") << QStringList{"estimate",
                                                       "--preset",
                                                       "smoke",
                                                       "--set",
                                                       "runtime.device=cuda",
                                                       "--compute-capability",
                                                       "9.0"};
    QTest::newRow("quantize") << QStringList{"quantize", "../study.sqlite", "bf16", "--scheme", "int8"};
    QTest::newRow("host describe") << QStringList{"host", "describe"};
}

void tst_Laptop::eachCommandThatTrainsSaysWhatToInstall()
{
    QFETCH(QStringList, arguments);
    const QString folder = m_dir.filePath(QString("empty-%1").arg(QTest::currentDataTag()).replace(' ', '-'));
    QVERIFY(QDir().mkpath(folder));
    const QByteArray studyBefore = [&] {
        QFile file(m_study);
        return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
    }();
    const Result result = optlog(arguments, folder);
    QCOMPARE(result.exitCode, 2);
    QVERIFY2(result.err.contains("install the package optlog-engine") && result.err.contains("nothing was written"),
             qPrintable(result.err));
    QCOMPARE(result.err.count('\n'), 1); // one line
    QCOMPARE(filesUnder(folder), QStringList());
    QCOMPARE(filesUnder(m_dir.filePath("data")), QStringList());
    QFile study(m_study);
    QVERIFY(study.open(QIODevice::ReadOnly));
    QCOMPARE(study.readAll(), studyBefore);
}

void tst_Laptop::itsBinariesLinkNoLibTorch()
{
    const QFileInfo built(optlog::testing::optlogBinary());
    QStringList binaries = {built.filePath()};
    if (const QString workbench = built.dir().filePath("optlog-workbench"); QFileInfo::exists(workbench))
        binaries << workbench;
    for (const QString &binary : binaries) {
        QProcess ldd;
        ldd.start("ldd", {binary});
        QVERIFY(ldd.waitForFinished(60000));
        QCOMPARE(ldd.exitCode(), 0);
        const QString libraries = QString::fromUtf8(ldd.readAllStandardOutput());
        QVERIFY2(libraries.contains("libsqlite3"), qPrintable(libraries)); // it read the right thing
        for (const char *torch : {"libtorch", "libc10", "libdnnl", "libopenblas"})
            QVERIFY2(!libraries.contains(torch), qPrintable(binary + " links " + torch + ":\n" + libraries));
    }
}

#ifdef OPTLOG_TEST_WORKBENCH
void tst_Laptop::theWorkbenchOffersNoPlaceHereWithoutTheEngine()
{
    // Beside this optlog no engine: "This machine" is shown, not offered, and the line says why.
    optlog::RunPlaceChooser laptop(m_optlog);
    auto *places = laptop.findChild<QComboBox *>("runPlace");
    QVERIFY(places);
    QCOMPARE(places->itemText(0), QString("This machine (no engine here)"));
    QVERIFY(!static_cast<QStandardItemModel *>(places->model())->item(0)->isEnabled());
    QVERIFY2(laptop.findChild<QLabel *>("runPlaceState")->text().contains("install the package optlog-engine"),
             qPrintable(laptop.findChild<QLabel *>("runPlaceState")->text()));
    QVERIFY(!laptop.choose(optlog::RunPlace::here()));

    // The build's optlog, with its engine beside it where the build has one.
    const bool engineBuilt = QFileInfo::exists(
        QFileInfo(optlog::testing::optlogBinary()).dir().filePath("optlog-engine"));
    optlog::RunPlaceChooser built(optlog::testing::optlogBinary());
    auto *builtPlaces = built.findChild<QComboBox *>("runPlace");
    QCOMPARE(static_cast<QStandardItemModel *>(builtPlaces->model())->item(0)->isEnabled(), engineBuilt);
    QCOMPARE(builtPlaces->itemText(0), engineBuilt ? QString("This machine") : QString("This machine (no engine here)"));
}
#endif

QTEST_MAIN(tst_Laptop)
#include "tst_laptop.moc"
