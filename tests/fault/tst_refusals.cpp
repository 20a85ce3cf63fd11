// SPDX-License-Identifier: MIT
// Bad input writes nothing: every refusal of the commands that train, plan or measure (`run`,
// `study`, `fit`, `estimate`, `tune`), given a study that does not exist yet, ends with exit 2
// and a message, and leaves no file behind: not the study, not its -wal or -shm, not the default
// study under $XDG_DATA_HOME, nothing in the folder it ran in. (tst_hostile holds the other half:
// a refusal changes no study that exists. `fit` finding nothing that fits is an answer, exit 5,
// not a refusal.)
#include "tests/common/buildfeatures.h"
#include "tests/common/enginebinary.h"
#include "tests/common/files.h"

#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

// Folders are not counted (filesUnder): the default study's ($XDG_DATA_HOME/optlog) is optlog's own
// place, made when a command first names a study in it.
using optlog::testing::filesUnder;

class tst_Refusals : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void aRefusalLeavesNoFile_data();
    void aRefusalLeavesNoFile();

private:
    QTemporaryDir m_inputs; // plans the study cases read; never where a command runs
};

void tst_Refusals::initTestCase()
{
    QVERIFY(m_inputs.isValid());
    optlog::testing::writtenFile(m_inputs, "unknown-key.toml",
                                 "name = \"p\"\n[[run]]\nname = \"a\"\npreset = \"smoke\"\ncolour = \"red\"\n");
    optlog::testing::writtenFile(m_inputs, "smoke.toml",
                                 "name = \"p\"\n[[run]]\nname = \"a\"\npreset = \"smoke\"\n"
                                 "overrides = [\"data.corpus=generated\"]\n");
}

void tst_Refusals::aRefusalLeavesNoFile_data()
{
    // {new}: a study that does not exist, in the empty folder the command runs in; {inputs}: the plans.
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("message");
    const QStringList smoke = {"--preset", "smoke", "--set", "data.corpus=generated"};
    const QStringList run = QStringList{"run", "--db", "{new}"} + smoke;
    const QStringList study = {"study", "{inputs}/smoke.toml", "--db", "{new}"};

    QTest::newRow("run: an unknown key") << run + QStringList{"--set", "train.stpes=3"} << "train.stpes: unknown key";
    QTest::newRow("run: an unknown key, the default study")
        << QStringList{"run"} + smoke + QStringList{"--set", "train.stpes=3"} << "train.stpes: unknown key";
    QTest::newRow("run: repeats 0") << run + QStringList{"--repeats", "0"} << "repeats";
    QTest::newRow("run: predicted above the budget")
        << run + QStringList{"--memory-budget", "64KiB"} << "above memory.budget = \"64KiB\"";
    QTest::newRow("run: predicted to take thousands of hours")
        << QStringList{"run", "--db", "{new}", "--preset", "gpt2-small", "--set", "train.steps=200000"}
        << "predicted to take at least [0-9.]+ hours";
    QTest::newRow("run: fp16 on a CPU") << run + QStringList{"--set", "precision.mode=autocast-fp16"}
                                        << "needs a CUDA device";
    QTest::newRow("run: a module that is not there")
        << run + QStringList{"--set", "model.source=torchscript", "--set", "model.path=\"{inputs}/none.pt\""}
        << "none.pt";
    QTest::newRow("study: a plan with an unknown key")
        << QStringList{"study", "{inputs}/unknown-key.toml", "--db", "{new}"} << "colour";
    QTest::newRow("study: a scheduler optlog does not know")
        << study + QStringList{"--scheduler", "pbs"} << "--scheduler pbs is not one optlog submits to";
    QTest::newRow("study: its run above the budget")
        << study + QStringList{"--set", "memory.budget=\"64KiB\""} << "above memory.budget = \"64KiB\"";
    QTest::newRow("study: the default study")
        << QStringList{"study", "{inputs}/smoke.toml", "--set", "train.stpes=3"} << "train.stpes";
    QTest::newRow("fit: a budget in words")
        << QStringList{"fit", "--preset", "smoke", "--memory-budget", "lots"} << "memory.budget = \"lots\"";
    QTest::newRow("estimate: an empty compute capability")
        << QStringList{"estimate", "--set", "runtime.device=cuda", "--compute-capability", ""}
        << "--compute-capability";
    QTest::newRow("estimate: a compute capability in words")
        << QStringList{"estimate", "--set", "runtime.device=cuda", "--compute-capability", "hopper"}
        << "--compute-capability";
    QTest::newRow("estimate: an unknown key")
        << QStringList{"estimate", "--set", "train.stpes=3"} << "train.stpes: unknown key";
    QTest::newRow("tune: a precision mode that is none") << QStringList{"tune", "--modes", "fp8"} << "fp8";
    QTest::newRow("tune: a preset that is none") << QStringList{"tune", "--preset", "huge"} << "huge";
    QTest::newRow("tune: a GPU this machine lacks")
        << QStringList{"tune", "--peak-only", "--device", "cuda"} << optlog::testing::cudaRefusal();
}

void tst_Refusals::aRefusalLeavesNoFile()
{
    QFETCH(QStringList, arguments);
    QFETCH(QString, message);
    QTemporaryDir here; // where the command runs, and $XDG_DATA_HOME and $XDG_CONFIG_HOME below it
    QVERIFY(here.isValid());
    for (QString &a : arguments)
        a.replace("{new}", here.filePath("new.sqlite")).replace("{inputs}", m_inputs.path());
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert("XDG_DATA_HOME", here.filePath("data"));
    environment.insert("XDG_CONFIG_HOME", here.filePath("config"));
    QProcess process;
    process.setProcessEnvironment(environment);
    process.setWorkingDirectory(here.path());
    process.start(optlog::testing::optlogBinary(), arguments);
    QVERIFY(process.waitForFinished(300000));
    const QString err = QString::fromUtf8(process.readAllStandardError());
    QCOMPARE(process.exitStatus(), QProcess::NormalExit);
    QVERIFY2(process.exitCode() == 2, qPrintable(QString("exit %1: %2").arg(process.exitCode()).arg(err)));
    QVERIFY2(QRegularExpression(message).match(err).hasMatch(),
             qPrintable("stderr does not say '" + message + "': " + err));
    QCOMPARE(filesUnder(here.path()), QStringList());
}

QTEST_GUILESS_MAIN(tst_Refusals)
#include "tst_refusals.moc"
