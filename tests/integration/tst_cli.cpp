// SPDX-License-Identifier: MIT
// Integration tests: the real `optlog` binary in real processes, a real study file.
#include "core/config/config.h"
#include "core/config/configfields.h"
#include "core/contract/format.h"
#include "core/store/store.h"
#include "core/store/weights.h"
#include "tests/common/buildfeatures.h"
#include "tests/common/enginebinary.h"
#include "tests/common/scenariosizes.h"
#include "tests/common/testpaths.h"

#include <SQLiteCpp/SQLiteCpp.h>

#include <QCryptographicHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QtTest>
#include <csignal>
#include <filesystem>

using namespace optlog;
using optlog::testing::Result;
using optlog::testing::runOptlog;
using optlog::testing::waitForSteps;

namespace {

const QStringList kSmoke = {"--preset", "smoke", "--set", "data.corpus=generated"};

QByteArray sha256(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QCryptographicHash::hash(file.readAll(), QCryptographicHash::Sha256).toHex();
}

} // namespace

class tst_Cli : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void versionNamesTheCommitAndLibTorch();
    void manualPageListsWhatEachCommandAccepts();
    void aStudyWithoutANameGoesToTheDataFolder();
    void workbenchWithoutADisplaySaysSo();
    void runWritesEverythingAComparisonNeeds();
    void badInputExitsTwoAndWritesNothing_data();
    void badInputExitsTwoAndWritesNothing();
    void terminateFinishesTheStepAndMarksCancelled();
    void aSecondStopSignalEndsTheProcess();
    void killedEngineLeavesACrashedRunWithItsMetrics();
    void readerReadsWhileTheEngineWrites();
    void studyRunsEachRunOnceAndCompares();
    void repeatsTrainOneGroupOverSeeds();
    void aToleranceIsAFiniteNumberOfNats();
    void exportWritesCsvAndJson();
    void refusesAStudyFromTheFuture();
    void overBudgetRunEndsAsOom();
    void fitsProposalRunsUnderTheSameBudget();
    void tunedSettingsAreUsedAndRecorded();
    void anUntunedFirstRunProbesAndSaysSo();
    void aRunWithOneDnnCappedBelowAvx512WidensItsBf16Products();
    void aBadMatmulPeakSettingIsRefusedBeforeTheStudyExists();
    void curationCommandsChangeTheStudy();
    void curationBadInputChangesNeitherStudy_data();
    void curationBadInputChangesNeitherStudy();
    void runFromAStoredRunChangesOneFieldAndLinksIt();
    void copyBetweenStudiesKeepsEveryRowAndTheSource();
    void resumeContinuesAsIfTheRunHadNotStopped_data();
    void resumeContinuesAsIfTheRunHadNotStopped();
    void resumeBadInputChangesNothing_data();
    void resumeBadInputChangesNothing();
    void quantizeBillsEveryByteAndPricesItInLoss();
    void quantizeBadInputChangesNothing_data();
    void quantizeBadInputChangesNothing();
    void pruneKeepsFinalWeightsAndDeleteRemovesAll();
    void estimateOnCudaWithoutAGpuNamesWhatIsNotKnown();

private:
    // A folder holding a study with a completed smoke run "done" (a checkpoint every 10 of its 40
    // steps) and a cancelled one "stopped" with its checkpoint, and their weights: made once,
    // copied (study and weights) for each test.
    QString weightsStudy(const QString &name);
    QString m_weightsTemplate;
    // A study with two finished smoke runs, fp32 and bf16, made once and copied for each test.
    QString curationStudy(const QString &name);
    QString m_curationTemplate;
    QTemporaryDir m_dir;
};

void tst_Cli::runWritesEverythingAComparisonNeeds()
{
    const QString study = m_dir.filePath("run.sqlite");
    const Result r = runOptlog(QStringList{"run", "--db", study, "--jsonl"} + kSmoke);
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QVERIFY(r.out.contains("\"event\":\"step\""));
    QVERIFY(r.out.contains("\"event\":\"finished\""));

    Store store(study.toStdString(), Store::Access::ReadOnly);
    const auto runs = store.runs();
    QCOMPARE(runs.size(), size_t(1));
    QCOMPARE(std::string(outcomeName(runs[0].outcome)), std::string("completed"));
    QVERIFY(runs[0].configToml.find("[model]") != std::string::npos);
    QVERIFY(runs[0].environmentJson.find("libtorch_version") != std::string::npos);
    QVERIFY(runs[0].environmentJson.find("intra_op_threads") != std::string::npos);
    QCOMPARE(store.metrics(runs[0].id).size(), size_t(40));
    QCOMPARE(store.validation(runs[0].id).size(), size_t(4));
    int measured = 0, predicted = 0;
    for (const auto &m : store.memory(runs[0].id))
        (m.source == MemorySource::Measured ? measured : predicted) += 1;
    QVERIFY(measured >= 6);
    QCOMPARE(predicted, 6); // model state, saved activations, temporaries, peak

    const Result shown = runOptlog({"show", study, "smoke"});
    QCOMPARE(shown.exitCode, 0);
    QVERIFY(shown.out.contains("optimizer_state"));
    // Its memory timelines: the first step and the first measured, each phase's peak, the step's
    // peak marked and equal to the run's measured peak.
    const Result timeline = runOptlog({"show", study, "smoke", "--timeline"});
    QCOMPARE(timeline.exitCode, 0);
    QVERIFY2(timeline.out.contains("step 0, the first, where AdamW's moments are made: peak "),
             qPrintable(timeline.out));
    QVERIFY(timeline.out.contains("the memory model predicts a steady step's peak at "));
    QVERIFY(timeline.out.contains("backward, block 0"));
    QVERIFY(timeline.out.contains("optimizer step"));
    QCOMPARE(timeline.out.count("<- here"), 2);
    const std::vector<MemoryTimeline> timelines = store.timelines(runs[0].id);
    QCOMPARE(timelines.size(), size_t(2));
    int64_t peak = 0;
    for (const auto &m : store.memory(runs[0].id))
        if (m.role == MemoryRole::Peak && m.source == MemorySource::Measured)
            peak = m.bytes;
    QCOMPARE(timelines[1].peakBytes(), peak);
    QVERIFY(timeline.out.contains(QString::fromStdString("step " + std::to_string(timelines[1].step)
                                                         + ", the first measured: peak " + formatBytes(peak))));
    const Result listed = runOptlog({"runs", study});
    QVERIFY(listed.out.contains("completed"));
}

void tst_Cli::badInputExitsTwoAndWritesNothing_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("expected");
    QTest::newRow("range") << QStringList{"--set", "train.microbatch=0"} << "train.microbatch = 0: must be from 1";
    QTest::newRow("unknown key") << QStringList{"--set", "train.mircobatch=2"} << "--set train.mircobatch: unknown key";
    QTest::newRow("preset") << QStringList{"--preset", "huge"} << "unknown preset 'huge'; known: default";
    QTest::newRow("missing file") << QStringList{"--config", "/nonexistent/run.toml"} << "cannot read '/nonexistent";
    QTest::newRow("config directory") << QStringList{"--config", "/tmp"} << "config: '/tmp' is a directory";
    QTest::newRow("missing corpus") << QStringList{"--set", "data.corpus=text", "--set", "data.path=/nonexistent.txt"}
                                    << "text corpus '/nonexistent.txt' does not exist";
    QTest::newRow("fp16 on cpu") << QStringList{"--set", "precision.mode=autocast-fp16"}
                                 << "precision.mode = \"autocast-fp16\" needs a CUDA device";
    QTest::newRow("master fp16 on cpu") << QStringList{"--set", "precision.mode=master-fp16"}
                                        << "or use \"autocast-bf16\" or \"master-bf16\"";
    // The development machine's LibTorch is CPU only.
    QTest::newRow("cuda without one") << QStringList{"--set", "runtime.device=cuda"} << testing::cudaRefusal();
    QTest::newRow("budget on cuda") << QStringList{"--set", "runtime.device=cuda", "--set", "memory.budget=64MiB"}
                                    << "the budget rehearses a device's limit on the CPU's allocator";
    QTest::newRow("context") << QStringList{"--set", "model.context_length=9000000"}
                             << "model.context_length = 9000000: must be from 1 to 65536";
    QTest::newRow("no repeats") << QStringList{"--repeats", "0"} << "repeats = 0 for smoke: must be from 1 to 100";
    QTest::newRow("too many repeats") << QStringList{"--repeats", "101"}
                                      << "repeats = 101 for smoke: must be from 1 to 100";
    QTest::newRow("repeats of a bad run")
        << QStringList{"--repeats", "2", "--set", "train.steps=0"} << "train.steps = 0: must be at least 1";
    QTest::newRow("diagnostics interval")
        << QStringList{"--set", "diagnostics.numerics_every=0"} << "diagnostics.numerics_every = 0: must be from 1";
    QTest::newRow("infinite budget") << QStringList{"--memory-budget", "infGiB"}
                                     << "memory.budget = \"infGiB\": not a finite size below 8 EiB";
    QTest::newRow("budget below a byte") << QStringList{"--memory-budget", "0.5B"}
                                         << "memory.budget = \"0.5B\": less than one byte";
    QTest::newRow("spike factor") << QStringList{"--set", "diagnostics.loss_spike_factor=-2"}
                                  << "diagnostics.loss_spike_factor = -2: must be from 1";
}

void tst_Cli::badInputExitsTwoAndWritesNothing()
{
    QFETCH(QStringList, arguments);
    QFETCH(QString, expected);
    const QString study = m_dir.filePath(QString("bad-%1.sqlite").arg(QTest::currentDataTag()));
    const Result r = runOptlog(QStringList{"run", "--preset", "smoke", "--db", study} + arguments);
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains(expected), qPrintable(r.err));
    QVERIFY(!QFile::exists(study));
}

void tst_Cli::terminateFinishesTheStepAndMarksCancelled()
{
    const QString study = m_dir.filePath("cancel.sqlite");
    QProcess engine;
    engine.start(optlog::testing::optlogBinary(),
                 QStringList{"run", "--db", study} + kSmoke + QStringList{"--set", "train.steps=100000"});
    QVERIFY(waitForSteps(study, 1));
    engine.terminate(); // SIGTERM
    QVERIFY(engine.waitForFinished(30000));
    QCOMPARE(engine.exitCode(), 4);
    Store store(study.toStdString(), Store::Access::ReadOnly);
    const auto run = store.runs().back();
    QCOMPARE(std::string(outcomeName(run.outcome)), std::string("cancelled"));
    const auto metrics = store.metrics(run.id);
    QVERIFY(!metrics.empty());
    QCOMPARE(run.outcomeStep, metrics.back().step); // every completed step was flushed
}

void tst_Cli::aSecondStopSignalEndsTheProcess()
{
    // A hung run can still be killed from the terminal. Sent together, the second of two different
    // signals stays pending until the first has been taken, so none is lost to the timing.
    const QString study = m_dir.filePath("second-signal.sqlite");
    QProcess engine;
    engine.start(optlog::testing::optlogBinary(),
                 QStringList{"run", "--db", study} + kSmoke + QStringList{"--set", "train.steps=100000"});
    QVERIFY(waitForSteps(study, 1));
    ::kill(pid_t(engine.processId()), SIGTERM);
    ::kill(pid_t(engine.processId()), SIGINT);
    QVERIFY(engine.waitForFinished(30000));
    QCOMPARE(engine.exitStatus(), QProcess::CrashExit); // ended by the signal, not exit code 4
}

void tst_Cli::killedEngineLeavesACrashedRunWithItsMetrics()
{
    const QString study = m_dir.filePath("crash.sqlite");
    QProcess engine;
    engine.start(optlog::testing::optlogBinary(),
                 QStringList{"run", "--db", study} + kSmoke + QStringList{"--set", "train.steps=100000"});
    QVERIFY(waitForSteps(study, 1));
    engine.kill(); // SIGKILL: nothing is flushed, nothing is marked
    QVERIFY(engine.waitForFinished(30000));
    size_t written = 0;
    {
        // A reader shows the run as crashed without storing it.
        Store reader(study.toStdString(), Store::Access::ReadOnly);
        QCOMPARE(std::string(outcomeName(reader.runs().back().outcome)), std::string("crashed"));
        QVERIFY(reader.runs().back().message.find("not yet stored") != std::string::npos);
        written = reader.metrics(reader.runs().back().id).size();
    }
    Store store(study.toStdString()); // opening for writing stores it
    const auto run = store.runs().back();
    QCOMPARE(std::string(outcomeName(run.outcome)), std::string("crashed"));
    QVERIFY(run.message.find("not yet stored") == std::string::npos);
    QCOMPARE(store.metrics(run.id).size(), written);
    QVERIFY(written > 0);
}

void tst_Cli::readerReadsWhileTheEngineWrites()
{
    const QString study = m_dir.filePath("concurrent.sqlite");
    QProcess engine;
    engine.start(optlog::testing::optlogBinary(),
                 QStringList{"run", "--db", study} + kSmoke
                     + QStringList{"--set", "train.steps=100000", "--set", "train.eval_interval=5"});
    QVERIFY(waitForSteps(study, 1));
    Store reader(study.toStdString(), Store::Access::ReadOnly);
    const int64_t runId = reader.runs().back().id;
    size_t first = reader.metrics(runId).size(), last = first;
    int reads = 0;
    QElapsedTimer timer;
    timer.start();
    while (timer.elapsed() < 3000) { // every read must succeed, none "database is locked"
        last = reader.metrics(runId).size();
        reader.validation(runId);
        ++reads;
    }
    engine.terminate();
    QVERIFY(engine.waitForFinished(30000));
    QVERIFY(last > first); // the reader saw the engine's writes as they came
    QVERIFY(reads > 10);
}

void tst_Cli::studyRunsEachRunOnceAndCompares()
{
    const QString plan = m_dir.filePath("plan.toml");
    QFile f(plan);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(
        "name = \"mini\"\nbaseline = \"whole\"\n"
        "[[run]]\nname = \"whole\"\npreset = \"smoke\"\noverrides = [\"data.corpus=generated\", \"train.steps=12\"]\n"
        "[[run]]\nname = \"accumulated\"\npreset = \"smoke\"\nbaseline = \"whole\"\n"
        "overrides = [\"data.corpus=generated\", \"train.steps=12\", \"train.microbatch=2\", "
        "\"train.accumulation=2\"]\n");
    f.close();
    const QString study = m_dir.filePath("mini.sqlite");
    const Result first = runOptlog({"study", plan, "--db", study});
    QVERIFY2(first.exitCode == 0, qPrintable(first.err));
    QVERIFY(first.out.contains("baseline"));
    QVERIFY(first.out.contains("accumulated"));
    // Accumulation reproduces the whole batch's gradients, so the validation losses are equal to
    // the last digit shown (the products' rounding, which depends on their row count, gives the sign).
    // Within a terminal's 120 columns: a row per run with its action, the verdict in full below.
    QVERIFY2(first.out.contains(QRegularExpression("\\naccumulated +1 +[-+]0\\.0000 +[0-9.]+x")), qPrintable(first.out));
    QVERIFY2(first.out.contains(
                 QRegularExpression("\\naccumulated: same quality by the 0\\.020 tolerance \\(Δ [-+]0\\.000 nats")),
             qPrintable(first.out));
    for (const QString &line : first.out.split(QLatin1Char('\n')))
        QVERIFY2(line.size() <= 120, qPrintable(line));
    // --wide: the whole verdict table on one line per run, for scripts.
    const Result wide = runOptlog({"compare", study, "--wide"});
    QCOMPARE(wide.exitCode, 0);
    QVERIFY2(QRegularExpression(
                 "\\naccumulated +1 +completed +([0-9.]+) @ 1536 tokens +[-+]0\\.0000 .*same quality by the 0\\.020 "
                 "tolerance \\(Δ [-+]0\\.000 nats")
                 .match(wide.out)
                 .hasMatch(),
             qPrintable(wide.out));
    // Then each run's peak by role, every state with the dtype read from its tensors.
    const qsizetype memory = first.out.indexOf("memory by role");
    QVERIFY2(memory >= 0, qPrintable(first.out));
    const QRegularExpression accumulatedLine("\\naccumulated +[0-9.]+ [KM]iB fp32 +[0-9.]+ [KM]iB fp32 +- +[0-9.]+ "
                                             "[KM]iB fp32 +[0-9.]+ [KM]iB +[0-9.]+ [KM]iB +[0-9.]+ [KM]iB\\n");
    QVERIFY2(first.out.mid(memory).contains(accumulatedLine), qPrintable(first.out.mid(memory)));

    const Result again = runOptlog({"study", plan, "--db", study});
    QCOMPARE(again.exitCode, 0);
    QVERIFY(again.err.contains("whole already completed"));
    Store store(study.toStdString(), Store::Access::ReadOnly);
    QCOMPARE(store.runs().size(), size_t(2));
    // Same tokens per step: the comparison is at the same token count for both.
    QCOMPARE(store.validation(1).back().tokens, store.validation(2).back().tokens);
}

void tst_Cli::repeatsTrainOneGroupOverSeeds()
{
    const QString study = m_dir.filePath("seeds.sqlite");
    const Result r = runOptlog({"run", "--preset", "smoke", "--db", study, "--repeats", "3", "--set", "train.seed=5",
                                "--set", "train.steps=6", "--set", "name=\"tiny\""});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    {
        Store store(study.toStdString(), Store::Access::ReadOnly);
        const auto runs = store.runs();
        QCOMPARE(runs.size(), size_t(3));
        QCOMPARE(runs[2].name, std::string("tiny seed 7"));
        for (const auto &run : runs)
            QCOMPARE(run.group, std::string("tiny"));
    }
    // The comparison is of the group, with its seed noise.
    const Result compared = runOptlog({"compare", study});
    QCOMPARE(compared.exitCode, 0);
    QVERIFY2(compared.out.contains(QRegularExpression("\\ntiny +3 ")), qPrintable(compared.out));
    // A study plan's runs, each repeated: only the missing replicates run again.
    const QString plan = m_dir.filePath("seeds-plan.toml");
    QFile f(plan);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("name = \"seeds\"\n[[run]]\nname = \"tiny\"\npreset = \"smoke\"\n"
            "overrides = [\"train.seed=5\", \"train.steps=6\"]\n");
    f.close();
    const Result studied = runOptlog({"study", plan, "--db", study, "--repeats", "4"});
    QVERIFY2(studied.exitCode == 0, qPrintable(studied.err));
    QVERIFY2(studied.err.contains("tiny seed 7 already completed"), qPrintable(studied.err));
    QVERIFY2(studied.err.contains("run 4/4: tiny seed 8"), qPrintable(studied.err));
    QVERIFY2(studied.out.contains(QRegularExpression("\\ntiny +4 ")), qPrintable(studied.out));
}

void tst_Cli::versionNamesTheCommitAndLibTorch()
{
    const Result r = runOptlog({"--version"});
    QCOMPARE(r.exitCode, 0);
    const QRegularExpression expected("^optlog [0-9]+\\.[0-9]+\\.[0-9]+ \\(commit [0-9A-Za-z.-]+\\), LibTorch "
                                      "[0-9]+\\.[0-9]+\\.[0-9]+ \\((CPU|CUDA)\\), gcc [0-9.]+; products on "
                                      "(aten|aten, sgemm, primitive); reports (with charts|without charts \\(csv "
                                      "and json only\\))\n$");
    QVERIFY2(expected.match(r.out).hasMatch(), qPrintable(r.out));
}

void tst_Cli::manualPageListsWhatEachCommandAccepts()
{
    // The build writes optlog.1 beside the binary from the same definitions --help prints.
    QFile page(QFileInfo(optlog::testing::optlogBinary()).dir().filePath("optlog.1"));
    QVERIFY2(page.open(QIODevice::ReadOnly), "the build did not write optlog.1");
    const QString manual = QString::fromUtf8(page.readAll());
    QVERIFY(manual.startsWith(".TH OPTLOG 1 "));
    const QRegularExpression option("(--[a-z][a-z-]+)");
    for (const QString command :
         {"run", "study", "compare", "estimate", "fit", "runs", "show", "export", "report", "tune"}) {
        QVERIFY2(manual.contains(".SS " + command + "\n"), qPrintable(command));
        const Result help = runOptlog({command, "--help"});
        QCOMPARE(help.exitCode, 0);
        for (const auto &match : option.globalMatch(help.out)) {
            const QString name = match.captured(1);
            if (name != "--help")
                QVERIFY2(manual.contains(QString(name).replace("-", "\\-")), qPrintable(command + " " + name));
        }
    }
    if (!QStandardPaths::findExecutable("groff").isEmpty()) {
        QProcess groff; // -ww: every warning; the page must render without one
        groff.start("groff", {"-man", "-ww", "-z", page.fileName()});
        QVERIFY(groff.waitForFinished());
        QCOMPARE(groff.exitCode(), 0);
        QCOMPARE(groff.readAllStandardError(), QByteArray());
    }
}

void tst_Cli::aStudyWithoutANameGoesToTheDataFolder()
{
    // Not into the working folder, not beside the binary: $XDG_DATA_HOME/optlog.
    QTemporaryDir data;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert("XDG_DATA_HOME", data.path());
    const Result r = runOptlog(QStringList{"run", "--set", "train.steps=5"} + kSmoke, 120000, environment);
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QVERIFY2(QFile::exists(data.filePath("optlog/study.sqlite")), qPrintable(r.err));
    QVERIFY(!QFile::exists(QFileInfo(optlog::testing::optlogBinary()).dir().filePath("study.sqlite")));
}

void tst_Cli::workbenchWithoutADisplaySaysSo()
{
    const QString workbench = QFileInfo(optlog::testing::optlogBinary()).dir().filePath("optlog-workbench");
    if (!QFile::exists(workbench))
        QSKIP("built without the workbench");
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    for (const char *name : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"})
        environment.remove(name);
    const auto run = [&](const QStringList &arguments) {
        QProcess process;
        process.setProcessEnvironment(environment);
        process.start(workbench, arguments);
        process.waitForFinished(60000);
        return std::make_tuple(process.exitStatus(), process.exitCode(), QString(process.readAllStandardError()),
                               QString(process.readAllStandardOutput()));
    };
    const auto [status, code, err, out] = run({m_dir.filePath("no-display.sqlite")});
    QCOMPARE(status, QProcess::NormalExit); // not Qt's abort
    QCOMPARE(code, 2);
    QVERIFY2(err.contains("no display"), qPrintable(err));
    QVERIFY(!QFile::exists(m_dir.filePath("no-display.sqlite")));
    const auto [versionStatus, versionCode, versionErr, versionOut] = run({"--version"});
    QCOMPARE(versionCode, 0);
    QVERIFY2(versionOut.startsWith("optlog "), qPrintable(versionOut + versionErr));
}

void tst_Cli::aToleranceIsAFiniteNumberOfNats()
{
    const QString study = m_dir.filePath("tolerance.sqlite");
    QCOMPARE(runOptlog({"run", "--preset", "smoke", "--db", study, "--set", "train.steps=6"}).exitCode, 0);
    for (const QString &bad :
         {QStringLiteral("nan"), QStringLiteral("-1"), QStringLiteral("inf"), QStringLiteral("x")}) {
        for (const QString &command : {QStringLiteral("compare"), QStringLiteral("report")}) {
            QStringList arguments = {command, study, "--tolerance", bad};
            if (command == QStringLiteral("report"))
                arguments << "--format"
                          << "csv"
                          << "-o" << m_dir.filePath("tolerance.csv");
            const Result r = runOptlog(arguments);
            QCOMPARE(r.exitCode, 2);
            QVERIFY2(r.err.contains("must be a finite number of nats per token"), qPrintable(r.err));
        }
    }
    QCOMPARE(runOptlog({"compare", study, "--tolerance", "0"}).exitCode, 0);
    // A study plan's tolerance likewise.
    const QString plan = m_dir.filePath("bad-tolerance.toml");
    QFile f(plan);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("name = \"t\"\ntolerance = -0.5\n[[run]]\nname = \"a\"\npreset = \"smoke\"\n");
    f.close();
    const Result r = runOptlog({"study", plan, "--db", m_dir.filePath("bad-tolerance.sqlite")});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("tolerance = -0.500000: must be a finite number"), qPrintable(r.err));
    QVERIFY(!QFile::exists(m_dir.filePath("bad-tolerance.sqlite")));
}

void tst_Cli::exportWritesCsvAndJson()
{
    const QString study = m_dir.filePath("export.sqlite");
    QCOMPARE(runOptlog(QStringList{"run", "--db", study, "--set", "train.steps=10", "--set", "train.eval_interval=5"}
                       + kSmoke)
                 .exitCode,
             0);
    const QString csv = m_dir.filePath("metrics.csv");
    QCOMPARE(runOptlog({"export", study, "--format", "csv", "-o", csv}).exitCode, 0);
    QFile file(csv);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(file.readAll()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 11);
    QVERIFY(lines[0].startsWith("run_id,run_name,step,tokens,train_loss"));
    QVERIFY(!lines[5].endsWith(",")); // step 4 was validated

    const Result json = runOptlog({"export", study, "--format", "json"});
    QCOMPARE(json.exitCode, 0);
    const QJsonDocument doc = QJsonDocument::fromJson(json.out.toUtf8());
    QCOMPARE(doc["runs"][0]["metrics"].toArray().size(), 10);
    // Its memory timelines as the study holds them (docs/events.md).
    const QJsonArray timelines = doc["runs"][0]["memory_timelines"].toArray();
    QCOMPARE(timelines.size(), 2);
    QCOMPARE(timelines[1]["measured_step"].toBool(), true);
    QVERIFY(timelines[1]["points"]["bytes"].toArray().size() > 10);
    QCOMPARE(timelines[1]["phases"].toArray().first()["part"].toString(), QStringLiteral("forward"));
    QVERIFY(doc["runs"][0]["environment"]["libtorch_version"].isString());
}

void tst_Cli::refusesAStudyFromTheFuture()
{
    const QString study = m_dir.filePath("future.sqlite");
    Store::createAtVersion(study.toStdString(), Store::kSchemaVersion);
    {
        // What a newer optlog would leave: a schema version beyond ours.
        SQLite::Database db(study.toStdString(), SQLite::OPEN_READWRITE);
        db.exec("PRAGMA user_version = " + std::to_string(Store::kSchemaVersion + 1));
    }
    const Result r = runOptlog(QStringList{"run", "--db", study} + kSmoke);
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains(QString("schema version %1, newer than this optlog knows").arg(Store::kSchemaVersion + 1)),
             qPrintable(r.err));
}

void tst_Cli::overBudgetRunEndsAsOom()
{
    const QString study = m_dir.filePath("oom.sqlite");
    // Predicted not to fit: refused before anything is written, with both numbers.
    const Result refused = runOptlog(QStringList{"run", "--db", study, "--memory-budget", "600KiB"} + kSmoke);
    QCOMPARE(refused.exitCode, 2);
    QVERIFY2(refused.err.contains("predicted to need 1.5 MiB")
                 && refused.err.contains("memory.budget = \"600KiB\" (600.0 KiB)") && refused.err.contains("--force"),
             qPrintable(refused.err));
    QVERIFY(!QFile::exists(study));
    // Forced, it trains until the budget refuses an allocation.
    const Result r = runOptlog(QStringList{"run", "--db", study, "--memory-budget", "600KiB", "--force"} + kSmoke);
    QCOMPARE(r.exitCode, 5);
    Store store(study.toStdString(), Store::Access::ReadOnly);
    const auto run = store.runs().back();
    QCOMPARE(std::string(outcomeName(run.outcome)), std::string("oom"));
    QVERIFY2(QString::fromStdString(run.message).contains("out of memory budget in the"), run.message.c_str());
    bool event = false;
    for (const auto &e : store.events(run.id))
        event = event || (e.kind == EventKind::Oom && e.message.find("\"budget_bytes\":614400") != std::string::npos);
    QVERIFY(event);
    bool predicted = false;
    for (const auto &m : store.memory(run.id))
        predicted = predicted || (m.role == MemoryRole::Peak && m.source == MemorySource::Predicted);
    QVERIFY(predicted); // what was written before the failure stays
}

void tst_Cli::fitsProposalRunsUnderTheSameBudget()
{
    const QStringList base = {"--preset", "smoke", "--set", "data.corpus=generated", "--set", "train.microbatch=16"};
    const Result tooBig = runOptlog(
        QStringList{"run", "--db", m_dir.filePath("fit-before.sqlite"), "--memory-budget", "2MiB", "--force"} + base);
    QCOMPARE(tooBig.exitCode, 5); // microbatch 16 does not fit 2 MiB

    const Result fit = runOptlog(QStringList{"fit", "--memory-budget", "2MiB"} + base);
    QVERIFY2(fit.exitCode == 0, qPrintable(fit.out + fit.err));
    QVERIFY(fit.out.contains("shorter context") && fit.out.contains("checkpointing") && fit.out.contains("BF16")
            && fit.out.contains("smaller model"));
    const QString proposal = fit.out.section("proposal: ", 1).trimmed();
    QVERIFY2(proposal.contains("train.accumulation="), qPrintable(fit.out));
    const Result run = runOptlog(
        QStringList{"run", "--db", m_dir.filePath("fit-after.sqlite"), "--memory-budget", "2MiB"} + base
        + proposal.split(' '));
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
}

void tst_Cli::tunedSettingsAreUsedAndRecorded()
{
    QTemporaryDir cacheDir;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert("XDG_CACHE_HOME", cacheDir.path());
    environment.remove("OMP_WAIT_POLICY");
    const QString study = m_dir.filePath("tuned.sqlite");
    const auto tuningOf = [&study](const std::string &run) {
        const Store store(study.toStdString(), Store::Access::ReadOnly);
        return QJsonDocument::fromJson(QByteArray::fromStdString(store.findRun(run)->environmentJson)).object();
    };

    // No tuning yet: the run says so.
    QCOMPARE(runOptlog(QStringList{"run", "--db", study, "--set", "name=before"} + kSmoke, 120000, environment).exitCode,
             0);
    QVERIFY2(tuningOf("before").value("tuning").toString().startsWith("untuned"),
             qPrintable(tuningOf("before").value("tuning").toString()));

    const Result tune = runOptlog({"tune", "--preset", "smoke", "--modes", "fp32", "--steps", "8", "--rounds", "1"},
                                  300000, environment);
    QVERIFY2(tune.exitCode == 0, qPrintable(tune.err));
    QVERIFY2(tune.out.contains("best for fp32:"), qPrintable(tune.out));
    QFile cacheFile(cacheDir.filePath("optlog/runtime-tuning.json"));
    QVERIFY(cacheFile.open(QIODevice::ReadOnly));
    const QJsonObject machines = QJsonDocument::fromJson(cacheFile.readAll()).object();
    QCOMPARE(machines.size(), 1);
    const QJsonObject fp32 = machines.begin().value().toObject().value("fp32").toObject();

    // The next run uses what the tuning chose, and records that it did.
    QCOMPARE(runOptlog(QStringList{"run", "--db", study, "--set", "name=after"} + kSmoke
                           + QStringList{"--set", "runtime.threads=0"},
                       120000, environment)
                 .exitCode,
             0);
    const QJsonObject after = tuningOf("after");
    QVERIFY2(after.value("tuning").toString().startsWith("tuned for fp32"),
             qPrintable(after.value("tuning").toString()));
    QCOMPARE(after.value("intra_op_threads").toInt(), fp32.value("threads").toInt());
    QCOMPARE(after.value("variables").toObject().value("OMP_WAIT_POLICY").toString(),
             fp32.value("wait_policy").toString());

    // The GEMM check that guards a core type passes with the kernels in use.
    QCOMPARE(runOptlog({"tune", "--gemm-check"}, 60000, environment).exitCode, 0);
}

void tst_Cli::aRunWithOneDnnCappedBelowAvx512WidensItsBf16Products()
{
    // ONEDNN_MAX_CPU_ISA=AVX2 leaves oneDNN no BF16 matmul, AVX-512 CPU or not. When the BF16 path
    // was chosen by the CPU's flags, every run's start on an AVX-512 machine failed with "could not
    // create a primitive descriptor iterator" (its environment names the path).
    if (!testing::buildFeatures().oneDnnProducts)
        QSKIP("this build has no oneDNN paths to cap: its LibTorch hides its own oneDNN (docs/building.md)");
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert("ONEDNN_MAX_CPU_ISA", "AVX2");
    const QString study = m_dir.filePath("avx2-capped.sqlite");
    const Result r = runOptlog(QStringList{"run", "--db", study, "--set", "train.steps=6"} + kSmoke, 120000,
                               environment);
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    const Store store(study.toStdString(), Store::Access::ReadOnly);
    const std::string runEnvironment = store.findRun("smoke")->environmentJson;
    QVERIFY2(runEnvironment.find("bfloat16: sgemm, widened (oneDNN ") != std::string::npos, runEnvironment.c_str());
    // Asked for by name there, the primitive is refused before a study exists, saying what is right.
    const QString refusedStudy = m_dir.filePath("avx2-capped-primitive.sqlite");
    const Result refused = runOptlog(QStringList{"run", "--db", refusedStudy, "--set", "train.steps=6", "--set",
                                                 "runtime.gemm=\"primitive\"", "--set",
                                                 "precision.mode=\"autocast-bf16\""}
                                         + kSmoke,
                                     120000, environment);
    QCOMPARE(refused.exitCode, 2);
    QVERIFY2(refused.err.contains("no BF16 matmul on this CPU") && refused.err.contains("\"sgemm\""),
             qPrintable(refused.err));
    QVERIFY(!QFile::exists(refusedStudy));
}

void tst_Cli::aBadMatmulPeakSettingIsRefusedBeforeTheStudyExists()
{
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert("OPTLOG_MATMUL_PEAK", "no");
    const QString study = m_dir.filePath("bad-peak-setting.sqlite");
    const Result r = runOptlog(QStringList{"run", "--db", study} + kSmoke, 60000, environment);
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("OPTLOG_MATMUL_PEAK=\"no\": expected 0"), qPrintable(r.err));
    QVERIFY(!QFileInfo::exists(study));
}

void tst_Cli::anUntunedFirstRunProbesAndSaysSo()
{
    QTemporaryDir cacheDir;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert("XDG_CACHE_HOME", cacheDir.path());
    environment.remove("OMP_WAIT_POLICY");
    environment.remove("OPTLOG_PROBE_UNTUNED"); // the suite's runs skip the probe; a user's do not
    const QString study = m_dir.filePath("probed.sqlite");
    const Result status = runOptlog({"tune", "--status"}, 60000, environment);
    QVERIFY2(status.out.contains("fp32: not tuned on this machine"), qPrintable(status.out));

    const Result first = runOptlog(QStringList{"run", "--db", study, "--set", "name=first"} + kSmoke, 300000,
                                   environment);
    QVERIFY2(first.exitCode == 0, qPrintable(first.err));
    QVERIFY2(first.err.contains(
                 "this machine has no tuning for fp32; probing threads, wait policy and product path first"),
             qPrintable(first.err));
    QVERIFY2(first.err.contains("optlog: probed in "), qPrintable(first.err));
    const Store store(study.toStdString(), Store::Access::ReadOnly);
    const QJsonObject environmentOfFirst
        = QJsonDocument::fromJson(QByteArray::fromStdString(store.findRun("first")->environmentJson)).object();
    QVERIFY2(environmentOfFirst.value("tuning").toString().startsWith("tuned for fp32 by a quick probe"),
             qPrintable(environmentOfFirst.value("tuning").toString()));
    QFile cacheFile(cacheDir.filePath("optlog/runtime-tuning.json"));
    QVERIFY(cacheFile.open(QIODevice::ReadOnly));
    const QJsonObject machines = QJsonDocument::fromJson(cacheFile.readAll()).object();
    QCOMPARE(machines.size(), 1);
    QCOMPARE(machines.begin().value().toObject().value("fp32").toObject().value("measured_by").toString(),
             QString("a quick probe"));
    // The key names what the settings depend on: the CPUs this process may use and OpenBLAS's core.
    QVERIFY2(machines.begin().key().contains("|cpus ") && machines.begin().key().contains("|openblas core "),
             qPrintable(machines.begin().key()));

    // Probed once: the next run of the family uses it without asking again; another family is not.
    const Result second = runOptlog(QStringList{"run", "--db", study, "--set", "name=second"} + kSmoke, 120000,
                                    environment);
    QCOMPARE(second.exitCode, 0);
    QVERIFY2(!second.err.contains("probing"), qPrintable(second.err));

    // The probe timed each product path this build has, kept the fastest with what each reached,
    // and the next run of the family took it (runtime.gemm = "auto").
    const QJsonObject fp32 = machines.begin().value().toObject().value("fp32").toObject();
    const QJsonArray paths = fp32.value("product_paths").toArray();
    const QString chosen = fp32.value("product_path").toString();
    QStringList timed;
    for (const QJsonValue &path : paths) {
        timed << path.toObject().value("path").toString();
        QVERIFY2(!path.toObject().value("reached").toString().isEmpty(), qPrintable(QJsonDocument(fp32).toJson()));
    }
    QVERIFY2(paths.isEmpty() ? chosen.isEmpty() : timed.contains(chosen), qPrintable(QJsonDocument(fp32).toJson()));
    const auto pathOf = [&study](const char *run) {
        const Store store(study.toStdString(), Store::Access::ReadOnly);
        return QJsonDocument::fromJson(QByteArray::fromStdString(store.findRun(run)->environmentJson))
            .object()
            .value("product_path")
            .toObject()
            .value("path")
            .toString();
    };
    QCOMPARE(pathOf("second"), chosen.isEmpty() ? QString("aten") : chosen);
    // A machine whose fastest path is ATen's uses ATen's.
    if (timed.contains("aten")) {
        QJsonObject edited = machines;
        QJsonObject machine = edited.begin().value().toObject();
        QJsonObject family = machine.value("fp32").toObject();
        family.insert("product_path", "aten");
        machine.insert("fp32", family);
        edited.insert(edited.begin().key(), machine);
        QFile rewrite(cacheDir.filePath("optlog/runtime-tuning.json"));
        QVERIFY(rewrite.open(QIODevice::WriteOnly | QIODevice::Truncate));
        rewrite.write(QJsonDocument(edited).toJson());
        rewrite.close();
        const Result third = runOptlog(QStringList{"run", "--db", study, "--set", "name=third"} + kSmoke, 120000,
                                       environment);
        QCOMPARE(third.exitCode, 0);
        QCOMPARE(pathOf("third"), QString("aten"));
    }
    const Result probed = runOptlog({"tune", "--status"}, 60000, environment);
    QVERIFY2(probed.out.contains("fp32: tuned by a quick probe: ") && probed.out.contains("bf16: not tuned"),
             qPrintable(probed.out));

    // A probe is a first guess: `tune --if-needed` (packaging/setup.sh run's) replaces it.
    const Result tuned = runOptlog({"tune", "--if-needed", "--preset", "smoke", "--modes", "fp32", "--steps", "5",
                                    "--rounds", "1"},
                                   300000, environment);
    QVERIFY2(tuned.exitCode == 0 && !tuned.out.contains("already tuned"), qPrintable(tuned.out + tuned.err));
    QVERIFY2(runOptlog({"tune", "--status"}, 60000, environment).out.contains("fp32: tuned by optlog tune: "),
             qPrintable(tuned.out));
}

QString tst_Cli::curationStudy(const QString &name)
{
    if (m_curationTemplate.isEmpty()) {
        const QString study = m_dir.filePath("curation-template.sqlite");
        for (const auto &[mode, runName] : {std::pair("fp32", "fp32"), std::pair("autocast-bf16", "bf16")}) {
            const Result r = runOptlog(QStringList{"run", "--db", study, "--set", "train.steps=8", "--set",
                                                   "train.eval_interval=4", "--set", QString("precision.mode=") + mode,
                                                   "--set", QString("name=") + runName}
                                       + kSmoke);
            if (r.exitCode != 0)
                qFatal("the curation study's run failed: %s", qPrintable(r.err));
        }
        m_curationTemplate = study; // every connection closed: the whole study is in the file
    }
    const QString path = m_dir.filePath(name);
    QFile::remove(path);
    QFile::copy(m_curationTemplate, path);
    return path;
}

void tst_Cli::curationCommandsChangeTheStudy()
{
    const QString study = curationStudy("curate.sqlite");
    QCOMPARE(runOptlog({"note", study, "fp32", "baseline\n<b>not html</b>"}).exitCode, 0);
    QCOMPARE(runOptlog({"tag", study, "fp32", "+long", "+base"}).exitCode, 0);
    QCOMPARE(runOptlog({"tag", study, "fp32", "-base"}).exitCode, 0);
    QCOMPARE(runOptlog({"tag", study, "bf16", "long"}).exitCode, 0);
    QCOMPARE(runOptlog({"rename", study, "bf16", "bf16 autocast"}).exitCode, 0);

    Result listed = runOptlog({"runs", study, "--filter", "tag:long mode:autocast-bf16"});
    QCOMPARE(listed.exitCode, 0);
    QVERIFY2(listed.out.contains("bf16 autocast") && !listed.out.contains(" fp32 "), qPrintable(listed.out));
    QVERIFY(listed.out.contains("(1 of 2 runs shown)"));
    listed = runOptlog({"runs", study, "--filter", "name:bf16"}); // the name it had still finds it
    QVERIFY2(listed.out.contains("bf16 autocast"), qPrintable(listed.out));

    const Result shown = runOptlog({"show", study, "fp32"});
    QVERIFY2(shown.out.contains("tags: long\n") && shown.out.contains("note:\n  baseline\n  <b>not html</b>"),
             qPrintable(shown.out));
    QVERIFY(runOptlog({"show", study, "bf16 autocast"}).out.contains("formerly named: bf16"));

    const QString markdown = m_dir.filePath("curate.md");
    const Result reported = runOptlog({"report", study, "--format", "md", "-o", markdown});
    if (testing::buildFeatures().chartReports) {
        QCOMPARE(reported.exitCode, 0);
        QFile report(markdown);
        QVERIFY(report.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(report.readAll());
        QVERIFY2(text.contains("Tags: long.") && text.contains("    <b>not html</b>"), qPrintable(text)); // as code
    } else { // a build without Qt draws no charts, and refuses the formats that have them, saying which it writes
        QCOMPARE(reported.exitCode, 2);
        QVERIFY2(reported.err.contains("csv and json work in this build"), qPrintable(reported.err));
        QVERIFY(!QFile::exists(markdown));
    }

    QCOMPARE(runOptlog({"archive", study, "fp32"}).exitCode, 0);
    QVERIFY(!runOptlog({"runs", study}).out.contains(" fp32 "));
    QVERIFY(runOptlog({"runs", study, "--all"}).out.contains("[archived]"));
    QVERIFY(!runOptlog({"compare", study}).out.contains("\nfp32 ")); // out of the comparison too
    QCOMPARE(runOptlog({"archive", study, "fp32", "--undo"}).exitCode, 0);

    const Result deleted = runOptlog({"delete", study, "fp32", "--yes"});
    QVERIFY2(deleted.exitCode == 0 && deleted.out.contains("deleted run 1 (fp32)"), qPrintable(deleted.err));
    const Result vacuum = runOptlog({"vacuum", study});
    QVERIFY2(vacuum.exitCode == 0 && vacuum.out.contains("freed"), qPrintable(vacuum.err));
    Store store(study.toStdString(), Store::Access::ReadOnly);
    QCOMPARE(store.runs().size(), size_t(1));
    QVERIFY(store.metrics(1).empty());
}

void tst_Cli::curationBadInputChangesNeitherStudy_data()
{
    QTest::addColumn<QStringList>("arguments"); // SRC and DEST stand for the two studies
    QTest::addColumn<QString>("expected");
    QTest::newRow("missing run") << QStringList{"note", "SRC", "nope", "x"} << "no run 'nope' in";
    QTest::newRow("empty note") << QStringList{"note", "SRC", "fp32", ""} << "the note is empty";
    QTest::newRow("10 KB note") << QStringList{"note", "SRC", "fp32", QString(10240, 'x')} << "at most 8192 bytes";
    QTest::newRow("tag with a space") << QStringList{"tag", "SRC", "fp32", "+two words"} << "holds a space";
    QTest::newRow("tag with a control") << QStringList{"tag", "SRC", "fp32", "+bell\a"} << "U+0007";
    QTest::newRow("tag with a mistyped option") << QStringList{"tag", "SRC", "fp32", "+a", "--yes"} << "not an option";
    QTest::newRow("rename to a name in use")
        << QStringList{"rename", "SRC", "fp32", "bf16"} << "already has a run named";
    QTest::newRow("delete unconfirmed") << QStringList{"delete", "SRC", "fp32"} << "add --yes";
    QTest::newRow("delete a missing run") << QStringList{"delete", "SRC", "fp32", "9", "--yes"} << "no run '9'";
    QTest::newRow("unknown filter key") << QStringList{"runs", "SRC", "--filter", "colour:red"} << "not a key a filter";
    QTest::newRow("copy a name that exists") << QStringList{"copy", "SRC", "fp32", "DEST"} << "already has a run named";
    QTest::newRow("copy into itself") << QStringList{"copy", "SRC", "fp32", "SRC"} << "into itself";
    QTest::newRow("copy into a text file") << QStringList{"copy", "SRC", "fp32", "TEXT"} << "is not an optlog study";
    QTest::newRow("copy into a newer study") << QStringList{"copy", "SRC", "fp32", "NEWER"} << "newer than this optlog";
    QTest::newRow("copy a missing run") << QStringList{"copy", "SRC", "fp32", "nope", "NEW"} << "no run 'nope'";
}

void tst_Cli::curationBadInputChangesNeitherStudy()
{
    QFETCH(QStringList, arguments);
    QFETCH(QString, expected);
    const QString tag = QString(QTest::currentDataTag()).replace(' ', '-');
    const QString source = curationStudy("bad-src-" + tag + ".sqlite");
    const QString dest = curationStudy("bad-dest-" + tag + ".sqlite");
    const QString text = m_dir.filePath("notes-" + tag + ".txt");
    QFile notes(text);
    QVERIFY(notes.open(QIODevice::WriteOnly));
    notes.write("not a study\n");
    notes.close();
    const QString newer = curationStudy("bad-newer-" + tag + ".sqlite");
    SQLite::Database(newer.toStdString(), SQLite::OPEN_READWRITE).exec("PRAGMA user_version = 99");
    const QString fresh = m_dir.filePath("bad-new-" + tag + ".sqlite");
    for (QString &argument : arguments)
        argument = argument == "SRC"     ? source
                   : argument == "DEST"  ? dest
                   : argument == "TEXT"  ? text
                   : argument == "NEWER" ? newer
                   : argument == "NEW"   ? fresh
                                         : argument;
    const QByteArray sourceBefore = sha256(source), destBefore = sha256(dest), textBefore = sha256(text),
                     newerBefore = sha256(newer);
    const Result r = runOptlog(arguments);
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains(expected), qPrintable(r.err));
    QCOMPARE(sha256(source), sourceBefore);
    QCOMPARE(sha256(dest), destBefore);
    QCOMPARE(sha256(text), textBefore);
    QCOMPARE(sha256(newer), newerBefore);
    QVERIFY(!QFile::exists(fresh));
    QVERIFY(!QFile::exists(fresh + "-wal"));
}

void tst_Cli::runFromAStoredRunChangesOneFieldAndLinksIt()
{
    const QString study = curationStudy("derived.sqlite");
    const Result r = runOptlog({"run", "--db", study, "--from", study + ":fp32", "--set", "train.steps=6"});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QVERIFY2(r.err.contains("(fp32 v2) completed"), qPrintable(r.err));
    Store store(study.toStdString(), Store::Access::ReadOnly);
    const RunRecord source = *store.findRun("fp32"), derived = *store.findRun("fp32 v2");
    QCOMPARE(derived.derivedFrom.runId, source.id);
    QCOMPARE(derived.derivedFrom.runName, std::string("fp32"));
    QCOMPARE(store.metrics(derived.id).size(), size_t(6));
    RunConfig before, after;
    applyTomlText(before, source.configToml, "source");
    applyTomlText(after, derived.configToml, "derived");
    QStringList changed;
    for (const auto &field : compareConfigs({before, after}))
        if (field.differs)
            changed << QString::fromStdString(field.path);
    QCOMPARE(changed, (QStringList{"name", "train.steps"})); // everything else as the stored run had it
    const Result shown = runOptlog({"show", study, "fp32 v2"});
    QVERIFY2(shown.out.contains("config derived from run 1 (fp32) of this study, changed: train.steps 8 -> 6"),
             qPrintable(shown.out));
    const Result refused = runOptlog({"run", "--db", study, "--from", study + ":nope"});
    QCOMPARE(refused.exitCode, 2);
    QVERIFY2(refused.err.contains("no run 'nope'"), qPrintable(refused.err));
    QCOMPARE(runOptlog({"run", "--db", study, "--from", study + ":1", "--preset", "smoke"}).exitCode, 2);
}

void tst_Cli::copyBetweenStudiesKeepsEveryRowAndTheSource()
{
    const QString source = curationStudy("copy-src.sqlite");
    QCOMPARE(runOptlog({"tag", source, "bf16", "+server"}).exitCode, 0);
    SQLite::Database(source.toStdString(), SQLite::OPEN_READWRITE)
        .exec("UPDATE meta SET value = '77' WHERE key = 'study_seed'");
    const QString dest = m_dir.filePath("copy-dest.sqlite");
    QFile::remove(dest);
    const QByteArray sourceBefore = sha256(source);
    const Result r = runOptlog({"copy", source, "bf16", "fp32", dest});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QCOMPARE(sha256(source), sourceBefore);
    const auto runsOf = [](const QString &study) {
        QJsonDocument doc = QJsonDocument::fromJson(runOptlog({"export", study, "--format", "json"}).out.toUtf8());
        QMap<QString, QJsonObject> byName;
        for (const QJsonValue &run : doc["runs"].toArray())
            byName[run["name"].toString()] = run.toObject();
        return byName;
    };
    const auto from = runsOf(source), to = runsOf(dest);
    QCOMPARE(to.keys(), from.keys());
    for (const QString &name : from.keys())
        for (const char *rows :
             {"metrics", "validation", "memory", "events", "numerics", "config_toml", "environment", "tags", "outcome"})
            QVERIFY2(to[name][rows] == from[name][rows], qPrintable(name + ": " + rows));
    QCOMPARE(Store(dest.toStdString(), Store::Access::ReadOnly).studySeed(), int64_t(77)); // a new study takes its seed
    QCOMPARE(runOptlog({"compare", dest}).exitCode, 0);
}

namespace {

using namespace optlog::testing::scenario;
const QString kEvery = QString::number(kResumeCheckpointInterval);
const QStringList kResumable = kSmoke + QStringList{"--set", "train.steps=" + QString::number(kResumeSteps),
                                                    "--set", "train.eval_interval=" + kEvery,
                                                    "--set", "train.checkpoint_interval=" + kEvery,
                                                    "--set", "model.dropout=0.1",
                                                    "--set", "precision.mode=master-bf16"};

// Starts `optlog run --jsonl`, and once its step events reach `step`, sends `signal`.
int interruptAt(const QStringList &arguments, int step, int signal)
{
    QProcess engine;
    engine.start(optlog::testing::optlogBinary(), arguments + QStringList{"--jsonl"});
    QByteArray pending;
    bool sent = false;
    QElapsedTimer timer;
    timer.start();
    while ((engine.state() != QProcess::NotRunning || engine.bytesAvailable()) && timer.elapsed() < 120000) {
        engine.waitForReadyRead(50);
        pending += engine.readAllStandardOutput();
        for (int end; !sent && (end = pending.indexOf('\n')) >= 0; pending.remove(0, end + 1)) {
            const QJsonObject event = QJsonDocument::fromJson(pending.left(end)).object();
            if (event.value("event").toString() == "step" && event.value("step").toInt() >= step) {
                ::kill(pid_t(engine.processId()), signal);
                sent = true;
            }
        }
        if (sent)
            break;
    }
    if (!sent)
        engine.kill(); // never reached the step: the caller's check fails, nothing is left running
    engine.waitForFinished(60000);
    return !sent ? -1 : engine.exitStatus() == QProcess::NormalExit ? engine.exitCode() : -signal;
}

} // namespace

void tst_Cli::resumeContinuesAsIfTheRunHadNotStopped_data()
{
    QTest::addColumn<int>("signal");
    QTest::addColumn<int>("stopAt");
    QTest::newRow("cancelled (SIGTERM): a checkpoint at the stop") << int(SIGTERM) << kResumeCancelledAt;
    QTest::newRow("killed (SIGKILL): the last periodic checkpoint") << int(SIGKILL) << kResumeKilledAt;
}

void tst_Cli::resumeContinuesAsIfTheRunHadNotStopped()
{
    QFETCH(int, signal);
    QFETCH(int, stopAt);
    const QString study = m_dir.filePath(QString("resume-%1.sqlite").arg(signal));
    QCOMPARE(runOptlog(QStringList{"run", "--db", study} + kResumable + QStringList{"--set", "name=whole"}).exitCode, 0);
    const QStringList cut = QStringList{"run", "--db", study} + kResumable + QStringList{"--set", "name=cut"};
    QCOMPARE(interruptAt(cut, stopAt, signal), signal == SIGTERM ? 4 : -SIGKILL);
    int64_t checkpointStep = -1;
    {
        Store store(study.toStdString()); // a killed run is marked crashed here
        const RunRecord run = *store.findRun("cut");
        QVERIFY(run.isFinished() && *run.outcome != Outcome::Completed);
        for (const WeightFile &file : weightFiles(store, run.id))
            checkpointStep = std::max(checkpointStep, file.step);
        QVERIFY2(checkpointStep >= kResumeCheckpointInterval - 1 && checkpointStep < kResumeSteps - 1,
                 qPrintable(QString::number(checkpointStep)));
        if (signal == SIGTERM)
            QCOMPARE(checkpointStep, run.outcomeStep); // written at the stop
        else
            QCOMPARE((checkpointStep + 1) % kResumeCheckpointInterval, int64_t(0)); // the interval's
    }
    const Result resumed = runOptlog(QStringList{"run", "--resume", study, "cut"});
    QVERIFY2(resumed.exitCode == 0, qPrintable(resumed.err));

    Store store(study.toStdString(), Store::Access::ReadOnly);
    const RunRecord whole = *store.findRun("whole"), run = *store.findRun("cut");
    QCOMPARE(std::string(outcomeName(run.outcome)), std::string("completed"));
    const auto expected = store.metrics(whole.id), got = store.metrics(run.id);
    QCOMPARE(got.size(), size_t(kResumeSteps));
    for (size_t i = 0; i < got.size(); ++i) {
        QCOMPARE(got[i].step, int64_t(i)); // metrics go on at the step after the checkpoint, none twice
        QVERIFY2(std::abs(got[i].trainLoss - expected[i].trainLoss) <= 1e-6,
                 qPrintable(QString("step %1: %2 vs %3").arg(i).arg(got[i].trainLoss).arg(expected[i].trainLoss)));
        QCOMPARE(got[i].lossScale, expected[i].lossScale);
    }
    const auto wholeValidation = store.validation(whole.id), cutValidation = store.validation(run.id);
    QCOMPARE(cutValidation.size(), wholeValidation.size());
    for (size_t i = 0; i < cutValidation.size(); ++i)
        QVERIFY(std::abs(cutValidation[i].loss - wholeValidation[i].loss) <= 1e-6);
    const auto finalOf = [&](int64_t id) {
        for (const WeightFile &file : weightFiles(store, id))
            if (file.kind == WeightFileKind::Final)
                return file;
        return WeightFile{};
    };
    QCOMPARE(finalOf(run.id).step, int64_t(kResumeSteps - 1));
    QCOMPARE(sha256(QString::fromStdString(store.absolutePath(finalOf(run.id).path))),
             QByteArray::fromStdString(finalOf(run.id).sha256));
    bool saidResumed = false;
    for (const EventRecord &event : store.events(run.id))
        saidResumed |= event.message.find("resumed from the checkpoint after step " + std::to_string(checkpointStep))
                       != std::string::npos;
    QVERIFY(saidResumed);
}

QString tst_Cli::weightsStudy(const QString &name)
{
    if (m_weightsTemplate.isEmpty()) {
        const QString folder = m_dir.filePath("weights-template");
        QDir().mkpath(folder);
        const QString study = folder + "/study.sqlite";
        const QStringList done = QStringList{"run",   "--db",     study, "--set", "train.checkpoint_interval=10",
                                             "--set", "name=done"}
                                 + kSmoke;
        if (const Result r = runOptlog(done); r.exitCode != 0)
            qFatal("the weights study's run failed: %s", qPrintable(r.err));
        const QStringList stopped = QStringList{"run",   "--db",        study, "--set", "train.steps=100000",
                                                "--set", "name=stopped"}
                                    + kSmoke;
        if (interruptAt(stopped, 3, SIGTERM) != 4)
            qFatal("the weights study's cancelled run did not end cancelled");
        m_weightsTemplate = folder;
    }
    const QString folder = m_dir.filePath(name);
    std::filesystem::remove_all(folder.toStdString());
    std::filesystem::copy(m_weightsTemplate.toStdString(), folder.toStdString(),
                          std::filesystem::copy_options::recursive);
    return folder + "/study.sqlite";
}

void tst_Cli::resumeBadInputChangesNothing_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("damage"); // what happens to the checkpoint first
    QTest::addColumn<QString>("expected");
    QTest::newRow("a completed run") << QStringList{"run", "--resume", "STUDY", "done"} << ""
                                     << "completed; to train it longer";
    QTest::newRow("a missing run") << QStringList{"run", "--resume", "STUDY", "nine"} << ""
                                   << "no run 'nine'";
    QTest::newRow("with --set") << QStringList{"run", "--resume", "STUDY", "stopped", "--set", "train.steps=9"} << ""
                                << "leave out --preset, --config, --set";
    QTest::newRow("with --db") << QStringList{"run", "--resume", "STUDY", "stopped", "--db", "STUDY"} << ""
                               << "leave out --db";
    QTest::newRow("a corrupt checkpoint") << QStringList{"run", "--resume", "STUDY", "stopped"} << "flip"
                                          << "SHA-256 .* but the study recorded";
    QTest::newRow("a truncated checkpoint") << QStringList{"run", "--resume", "STUDY", "stopped"} << "truncate"
                                            << "is [0-9]+ bytes, but the study recorded [0-9]+: it is truncated";
    QTest::newRow("a missing checkpoint") << QStringList{"run", "--resume", "STUDY", "stopped"} << "remove"
                                          << "cannot be read";
    QTest::newRow("a config edited to another model") << QStringList{"run", "--resume", "STUDY", "stopped"} << "config"
                                                      << "holds token_embedding.weight as Float \\[256, 32\\], but the "
                                                         "run's config makes it Float \\[256, 64\\]";
}

namespace {

// The weights file of `kind` of the run named `name`, absolute.
QString weightsFileOf(const QString &study, const std::string &name, WeightFileKind kind)
{
    const Store store(study.toStdString(), Store::Access::ReadOnly);
    for (const WeightFile &file : weightFiles(store, store.findRun(name)->id))
        if (file.kind == kind)
            return QString::fromStdString(store.absolutePath(file.path));
    return {};
}

// Spoils run `name`'s weights file of `kind` as a disk or a person might: one byte changed ("flip"),
// the end cut off ("truncate"), removed ("remove"), or the stored config edited to another model
// ("config"), which leaves the file whole.
void spoil(const QString &study, const std::string &name, WeightFileKind kind, const QString &how)
{
    if (how.isEmpty())
        return;
    if (how == "config") {
        SQLite::Database(study.toStdString(), SQLite::OPEN_READWRITE)
            .exec("UPDATE runs SET config_toml = replace(config_toml, 'width = 32', 'width = 64') WHERE name = '" + name
                  + "'");
        return;
    }
    const QString path = weightsFileOf(study, name, kind);
    if (how == "remove") {
        QFile::remove(path);
        return;
    }
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadWrite));
    if (how == "flip") {
        file.seek(file.size() / 2);
        char byte = 0;
        file.getChar(&byte);
        file.seek(file.size() / 2);
        file.putChar(char(byte ^ 0x40));
    } else if (how == "truncate") {
        file.resize(file.size() - 100);
    }
}

} // namespace

void tst_Cli::resumeBadInputChangesNothing()
{
    QFETCH(QStringList, arguments);
    QFETCH(QString, damage);
    QFETCH(QString, expected);
    const QString study = weightsStudy(QString("resume-bad-%1").arg(QTest::currentDataTag()).replace(' ', '-'));
    spoil(study, "stopped", WeightFileKind::Checkpoint, damage);
    arguments.replaceInStrings("STUDY", study);
    const QByteArray before = sha256(study);
    const Result r = runOptlog(arguments);
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains(QRegularExpression(expected)), qPrintable(r.err));
    QCOMPARE(sha256(study), before);
}

void tst_Cli::quantizeBillsEveryByteAndPricesItInLoss()
{
    const QString study = weightsStudy("quantize");
    const Result r = runOptlog(
        QStringList{"quantize", study, "done", "--scheme", "int8,int4,int4-asym,nf4,mixed", "--group", "16,32"});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("float32 (the run's own)") && r.out.contains("optimizer state, the gradients"),
             qPrintable(r.out));
    const Store store(study.toStdString(), Store::Access::ReadOnly);
    const auto results = quantizations(store, store.findRun("done")->id);
    QCOMPARE(results.size(), size_t(9)); // int8 once, the others at both groups
    const std::vector<std::string> matrices = {"blocks.0.attention.qkv.weight", "blocks.0.attention.proj.weight",
                                               "blocks.0.mlp.fc.weight", "blocks.0.mlp.proj.weight"};
    // The smoke model's 2-D block weights: per block qkv 32x96... as (out, in): 3C x C, C x C, 4C x C, C x 4C.
    const int64_t C = 32, quantized = 2 * (3 * C * C + C * C + 4 * C * C + 4 * C * C);
    for (const QuantizationResult &q : results) {
        const QString label = QString::fromStdString(q.scheme + " g" + std::to_string(q.groupSize));
        QCOMPARE(q.quantizedWeights, quantized);
        QCOMPARE(q.floatBytes, (q.totalWeights - quantized) * 4); // embeddings, LayerNorm, biases in FP32
        QCOMPARE(q.floatDtype, std::string("float32"));
        if (q.scheme == "int8") {
            QCOMPARE(q.codeBytes, quantized);
            QCOMPARE(q.scaleBytes, 2 * (3 * C + C + 4 * C) * 2 + 2 * C * 2); // one FP16 scale per output row
        } else if (q.scheme != "mixed") {
            QCOMPARE(q.codeBytes, quantized / 2);
            QCOMPARE(q.scaleBytes, 2 * quantized / q.groupSize);
            QCOMPARE(q.zeroPointBytes, q.scheme == "int4-asym" ? quantized / q.groupSize : 0);
        }
        QCOMPARE(q.bitsPerWeight(),
                 8.0 * double(q.codeBytes + q.scaleBytes + q.zeroPointBytes + q.floatBytes) / double(q.totalWeights));
        QVERIFY2(q.kl >= 0 && q.top1Agreement > 0.5 && q.top1Agreement <= 1, qPrintable(label));
        QVERIFY(q.workspaceBytes >= 4 * C * C * 4); // at least the largest matrix dequantized to FP32
        QVERIFY(q.activationBytes > 0);
        QCOMPARE(q.sensitivity.size(), size_t(8));
        for (size_t i = 1; i < q.sensitivity.size(); ++i)
            QVERIFY(q.sensitivity[i - 1].lossDelta >= q.sensitivity[i].lossDelta);
        QVERIFY(q.baseLoss > 0 && std::isfinite(q.loss));
    }
    // mixed keeps the two tensors int4 costs most in int8: int4's own ranking at that group.
    for (const QuantizationResult &mixed : results)
        if (mixed.scheme == "mixed")
            for (const QuantizationResult &int4 : results)
                if (int4.scheme == "int4" && int4.groupSize == mixed.groupSize)
                    QCOMPARE(mixed.int8Tensors, int4.sensitivity[0].tensor + "," + int4.sensitivity[1].tensor);
    // A second quantization with the same scheme replaces the first rather than adding a row.
    QCOMPARE(runOptlog(QStringList{"quantize", study, "done", "--scheme", "nf4", "--group", "16"}).exitCode, 0);
    QCOMPARE(quantizations(store, store.findRun("done")->id).size(), size_t(9));
    const Result show = runOptlog(QStringList{"show", study, "done"});
    QVERIFY(show.out.contains("quantizations of the final weights") && show.out.contains("nf4 g16"));
    QVERIFY(show.out.contains("weights on disk") && show.out.contains("final"));
    // Every report format carries the table and what the scheme did not touch (a build without Qt
    // writes no format with charts: curationCommandsChangeTheStudy checks its refusal).
    const QStringList formats = testing::buildFeatures().chartReports ? QStringList{"md", "html", "json", "csv"}
                                                                      : QStringList{"json", "csv"};
    for (const QString &format : formats) {
        const QString output = m_dir.filePath("quantize-report." + format);
        const Result report = runOptlog(
            QStringList{"report", study, "--runs", "done", "--format", format, "-o", output});
        QVERIFY2(report.exitCode == 0, qPrintable(report.err));
        QFile file(output);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(file.readAll());
        QVERIFY2(format == "json" ? text.contains("\"scheme\": \"nf4\"") && text.contains("\"group_size\": 16")
                                  : text.contains("nf4 g16"),
                 qPrintable(format));
        if (format != "csv")
            QVERIFY2(text.contains("the optimizer state, the gradients and the activations"), qPrintable(format));
    }
}

void tst_Cli::quantizeBadInputChangesNothing_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("damage"); // what happens to the final weights first
    QTest::addColumn<QString>("expected");
    QTest::newRow("unknown scheme") << QStringList{"--scheme", "int3"} << ""
                                    << "unknown scheme 'int3'; the schemes are";
    QTest::newRow("no scheme") << QStringList{} << ""
                               << "--scheme is required";
    QTest::newRow("group not a power of two") << QStringList{"--scheme", "int4", "--group", "24"} << ""
                                              << "--group 24 is not a power of two";
    QTest::newRow("group larger than a row") << QStringList{"--scheme", "nf4", "--group", "64"} << ""
                                             << "--group 64 is larger than its rows of 32 weights";
    QTest::newRow("group not a number") << QStringList{"--scheme", "int4", "--group", "big"} << ""
                                        << "--group 'big' is not a group size";
    QTest::newRow("tensors naming none") << QStringList{"--scheme", "int8", "--tensors", "decoder.*"} << ""
                                         << "names no weight matrix of this model; its matrices are";
    QTest::newRow("corrupt weights") << QStringList{"--scheme", "int8"} << "flip"
                                     << "SHA-256 .* but the study recorded";
    QTest::newRow("truncated weights") << QStringList{"--scheme", "int8"} << "truncate"
                                       << "it is truncated";
    QTest::newRow("missing weights") << QStringList{"--scheme", "int8"} << "remove"
                                     << "cannot be read";
    QTest::newRow("a config edited to another model") << QStringList{"--scheme", "int8"} << "config"
                                                      << "holds token_embedding.weight as Float \\[256, 32\\], but the "
                                                         "run's config makes it Float \\[256, 64\\]";
}

void tst_Cli::quantizeBadInputChangesNothing()
{
    QFETCH(QStringList, arguments);
    QFETCH(QString, damage);
    QFETCH(QString, expected);
    const QString study = weightsStudy(QString("quantize-bad-%1").arg(QTest::currentDataTag()).replace(' ', '-'));
    spoil(study, "done", WeightFileKind::Final, damage);
    const QByteArray before = sha256(study);
    const Result r = runOptlog(QStringList{"quantize", study, "done"} + arguments);
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains(QRegularExpression(expected)), qPrintable(r.err));
    QCOMPARE(sha256(study), before);
    // A run that did not complete has no final weights, whatever is asked.
    const Result stopped = runOptlog(QStringList{"quantize", study, "stopped", "--scheme", "int8"});
    QCOMPARE(stopped.exitCode, 2);
    QVERIFY2(stopped.err.contains("has not completed (cancelled), so it has no final weights"), qPrintable(stopped.err));
    QCOMPARE(sha256(study), before);
}

void tst_Cli::pruneKeepsFinalWeightsAndDeleteRemovesAll()
{
    const QString study = weightsStudy("prune");
    const QString folder = study + ".weights";
    QVERIFY(QFile::exists(weightsFileOf(study, "done", WeightFileKind::Checkpoint)));
    const QString final = weightsFileOf(study, "done", WeightFileKind::Final);
    const Result pruned = runOptlog(QStringList{"prune", study, "done"});
    QVERIFY2(pruned.exitCode == 0 && pruned.out.contains("removed"), qPrintable(pruned.err));
    {
        const Store store(study.toStdString(), Store::Access::ReadOnly);
        const auto files = weightFiles(store, store.findRun("done")->id);
        QCOMPARE(files.size(), size_t(1));
        QCOMPARE(files.front().kind, WeightFileKind::Final);
    }
    QCOMPARE(QDir(QFileInfo(final).path()).entryList(QDir::Files), QStringList{"final.pt"});
    QVERIFY(QFile::exists(weightsFileOf(study, "stopped", WeightFileKind::Checkpoint))); // another run's: kept
    QCOMPARE(runOptlog(QStringList{"delete", study, "done", "--yes"}).exitCode, 0);
    QVERIFY(!QFileInfo::exists(QFileInfo(final).path()));
}

void tst_Cli::estimateOnCudaWithoutAGpuNamesWhatIsNotKnown()
{
    // This machine has no GPU (and the first build no CUDA): the estimate takes CUDA's own terms,
    // names what it cannot know, and calibrates nothing.
    const Result unknown = runOptlog({"estimate", "--preset", "seed-15m", "--set", "runtime.device=cuda"});
    QCOMPARE(unknown.exitCode, 0);
    QVERIFY2(unknown.out.contains("Device: cuda, chip not known"), qPrintable(unknown.out));
    QVERIFY2(unknown.out.contains("not known here: a GPU:"), qPrintable(unknown.out));
    QVERIFY2(unknown.out.contains("not known here: which chip"), qPrintable(unknown.out));
    QVERIFY2(unknown.out.contains("CUDA's op list"), qPrintable(unknown.out));
    QVERIFY2(unknown.out.contains("calibration: none"), qPrintable(unknown.out));
    QVERIFY2(unknown.out.contains("66.0 MiB of cuBLAS workspaces"), qPrintable(unknown.out)); // Hopper's, the larger
    // The chip named: an A100's workspaces, 2 x (8.1 + 1) MiB.
    const Result named = runOptlog(
        {"estimate", "--preset", "seed-15m", "--set", "runtime.device=cuda", "--compute-capability", "8.0"});
    QCOMPARE(named.exitCode, 0);
    QVERIFY2(named.out.contains("(compute capability 8.0)"), qPrintable(named.out));
    QVERIFY2(named.out.contains("18.2 MiB of cuBLAS workspaces"), qPrintable(named.out));
    QVERIFY(!named.out.contains("not known here: which chip"));
    // A capability that is not one, or one without a GPU device: exit 2, saying what would be right.
    const Result bad = runOptlog({"estimate", "--set", "runtime.device=cuda", "--compute-capability", "H100"});
    QCOMPARE(bad.exitCode, 2);
    QVERIFY2(bad.err.contains("expected MAJOR.MINOR such as 9.0"), qPrintable(bad.err));
    const Result onCpu = runOptlog({"estimate", "--compute-capability", "9.0"});
    QCOMPARE(onCpu.exitCode, 2);
    QVERIFY2(onCpu.err.contains("needs --set runtime.device=cuda"), qPrintable(onCpu.err));
}

QTEST_GUILESS_MAIN(tst_Cli)

#include "tst_cli.moc"
