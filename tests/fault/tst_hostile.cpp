// SPDX-License-Identifier: MIT
// The fault and fuzz suite: the real `optlog` binary against hostile input (configs, data files,
// study files, arguments), signals at every phase of a run, a disk that fills and a file-size
// limit, and seeded random configs. The invariants: never a signal or an exit code outside 0-5; a
// refusal (exit 2) names what is wrong and changes no study (its SHA-256 and row counts) and no
// input file; what a run committed is never lost.
#include "core/store/store.h"
#include "tests/common/buildfeatures.h"
#include "tests/common/configfuzzer.h"
#include "tests/common/enginebinary.h"
#include "tests/common/poisonedplaces.h"
#include "tests/common/scenariosizes.h"
#include "tests/common/testpaths.h"

#include <SQLiteCpp/SQLiteCpp.h>

#include <QCryptographicHash>
#include <QDirIterator>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QtTest>
#include <csignal>

#include <sys/syscall.h>
#include <unistd.h>

using namespace optlog;

namespace {

const QStringList kSmoke = {"--preset", "smoke", "--set", "data.corpus=generated"};

struct Result
{
    int exitCode = -1;
    bool crashed = false; // ended by a signal, or did not end in time
    QString out;
    QString err;
};

Result runProgram(const QString &program, const QStringList &arguments, int timeoutMs = 120000)
{
    QProcess process;
    process.start(program, arguments);
    Result r;
    if (!process.waitForFinished(timeoutMs)) {
        process.kill();
        process.waitForFinished();
        r.crashed = true;
        return r;
    }
    r.crashed = process.exitStatus() != QProcess::NormalExit;
    r.exitCode = process.exitCode();
    r.out = QString::fromUtf8(process.readAllStandardOutput());
    r.err = QString::fromUtf8(process.readAllStandardError());
    return r;
}

Result runOptlog(const QStringList &arguments, int timeoutMs = 120000)
{
    return runProgram(optlog::testing::optlogBinary(), arguments, timeoutMs);
}

QByteArray sha256(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return "unreadable";
    QCryptographicHash hash(QCryptographicHash::Sha256);
    hash.addData(&file);
    return hash.result().toHex();
}

// Every file and folder under `root` with its contents' hash: what a refusal must not change.
QMap<QString, QByteArray> folderState(const QString &root)
{
    QMap<QString, QByteArray> state;
    QDirIterator it(root, QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden | QDir::System,
                    QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString path = it.next();
        const QFileInfo info = it.fileInfo();
        state[QDir(root).relativeFilePath(path)] = info.isSymLink() ? "link" : info.isDir() ? "folder" : sha256(path);
    }
    return state;
}

// `after` less what a reading command's connection leaves beside a study it opened and `before`
// did not hold: SQLite's -shm and empty -wal files (a reader cannot remove them safely). Nothing
// else may appear.
QMap<QString, QByteArray> withoutReadersFiles(QMap<QString, QByteArray> after, const QMap<QString, QByteArray> &before,
                                              const QString &root)
{
    for (const QString &name : after.keys())
        if (!before.contains(name)
            && (name.endsWith("-shm") || (name.endsWith("-wal") && QFileInfo(root + "/" + name).size() == 0)))
            after.remove(name);
    return after;
}

// A study's rows per table and its integrity check, read without writing.
struct StudyRows
{
    QMap<QString, qint64> rows;
    QString integrity;
};

StudyRows studyRows(const QString &path)
{
    StudyRows s;
    SQLite::Database db(path.toStdString(), SQLite::OPEN_READONLY);
    SQLite::Statement tables(db, "SELECT name FROM sqlite_master WHERE type = 'table'");
    while (tables.executeStep()) {
        const std::string table = tables.getColumn(0).getString();
        s.rows[QString::fromStdString(table)] = db.execAndGet("SELECT count(*) FROM \"" + table + "\"").getInt64();
    }
    s.integrity = QString::fromStdString(db.execAndGet("PRAGMA integrity_check").getString());
    return s;
}

// The suite's figures, for docs/robustness.md: every case tried, how many ended as documented, how many
// ended by a signal, how many lost what a study held.
struct Figures
{
    int tried = 0, handled = 0, crashes = 0, dataLost = 0;
};
Figures g_figures;

} // namespace

class tst_Hostile : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void hostileInputIsRefusedAndChangesNothing_data();
    void hostileInputIsRefusedAndChangesNothing();
    void aStudyFromSomeoneElseRunsNothing_data();
    void aStudyFromSomeoneElseRunsNothing();
    void unwritableStudyIsReadButNotWritten();
    void immutableStudyIsRefusedForWriting();
    void killAtAnyPointKeepsEveryCommittedRow();
    void terminateCancelsInEveryPhase_data();
    void terminateCancelsInEveryPhase();
    void noTrainingThreadRunsAStopHandler();
    void fullDiskEndsTheRunFailedWithItsCause();
    void fileSizeLimitEndsTheRunFailedWithItsCause();
    void fuzzedConfigsNeverCrashOrChangeARefusedStudy();
    void cleanupTestCase();

private:
    QString fixture(const QString &name) const { return m_dir.filePath("fixture/" + name); }
    // A fresh copy of the reference study (one completed run) in its own folder.
    QString studyCopy(const QString &name);
    QString write(const QString &name, const QByteArray &bytes);
    void writeTokens(const QString &folder, const QVector<quint16> &train, const QVector<quint16> &validation);
    void record(bool handled, bool crashed, bool lost);

    QTemporaryDir m_dir;
    QString m_reference;
};

QString tst_Hostile::write(const QString &name, const QByteArray &bytes)
{
    const QString path = fixture(name);
    QDir().mkpath(QFileInfo(path).path());
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size())
        qFatal("cannot write %s", qPrintable(path));
    return path;
}

void tst_Hostile::writeTokens(const QString &folder, const QVector<quint16> &train, const QVector<quint16> &validation)
{
    const auto bytes = [](const QVector<quint16> &ids) {
        QByteArray out;
        for (quint16 id : ids) {
            out.append(char(id & 0xff));
            out.append(char(id >> 8));
        }
        return out;
    };
    if (!train.isEmpty())
        write(folder + "/train.bin", bytes(train));
    if (!validation.isEmpty())
        write(folder + "/val.bin", bytes(validation));
}

QString tst_Hostile::studyCopy(const QString &name)
{
    const QString folder = m_dir.filePath("cases/" + name);
    QDir().mkpath(folder);
    const QString path = folder + "/study.sqlite";
    QFile::remove(path);
    if (!QFile::copy(m_reference, path))
        qFatal("cannot copy the reference study");
    return path;
}

void tst_Hostile::record(bool handled, bool crashed, bool lost)
{
    ++g_figures.tried;
    g_figures.handled += handled ? 1 : 0;
    g_figures.crashes += crashed ? 1 : 0;
    g_figures.dataLost += lost ? 1 : 0;
}

void tst_Hostile::initTestCase()
{
    QVERIFY(m_dir.isValid());
    m_reference = m_dir.filePath("reference.sqlite");
    const Result made = runOptlog(
        QStringList{"run", "--db", m_reference, "--set", "train.steps=6", "--set", "train.eval_interval=3"} + kSmoke);
    QVERIFY2(made.exitCode == 0, qPrintable(made.err));

    // Hostile inputs, made once; every case checks that none of them changes.
    QByteArray garbage;
    quint32 x = 12345;
    for (int i = 0; i < 4096; ++i) {
        x = x * 1103515245u + 12345u;
        garbage.append(char(x >> 16));
    }
    write("garbage.bin", garbage);
    write("notes.txt", "hello\n");
    write("empty.txt", "");
    write("short.txt", "abc");
    write("binary-corpus.txt", garbage.repeated(64));
    write("not-toml.toml", garbage.left(200));
    write("unknown-section.toml", "[nosuch]\nx = 1\n");
    write("wrong-type.toml", "[model]\nwidth = \"wide\"\n");
    write("duplicate-key.toml", "[model]\nwidth = 8\nwidth = 16\n");
    write("nul-in-name.toml", "name = \"a\\u0000b\"\n");
    write("newline-in-name.toml", "name = \"first\\nsecond\"\n");
    write("long-line.toml", "name = \"" + QByteArray(1 << 20, 'x') + "\"\n");
    write("deep.toml", QByteArray("a") + QByteArray(".b").repeated(5000) + " = 1\n");
    write("utf16.toml", QByteArray("\xff\xfe") + QByteArray("n\0a\0m\0e\0 \0=\0 \0\"\0x\0\"\0\n\0", 22));
    write("array-for-table.toml", "model = [1, 2]\n");
    write("plan-not-toml.toml", garbage.left(100));
    write("plan-no-runs.toml", "name = \"empty\"\n");
    write("plan-unknown-key.toml", "name = \"p\"\n[[run]]\nname = \"a\"\npreset = \"smoke\"\ncolour = \"red\"\n");
    write("plan-nan-tolerance.toml", "name = \"p\"\ntolerance = nan\n[[run]]\nname = \"a\"\npreset = \"smoke\"\n");
    write("plan-zero-repeats.toml", "name = \"p\"\n[[run]]\nname = \"a\"\npreset = \"smoke\"\nrepeats = 0\n");
    write("plan-one-run.toml", "name = \"p\"\n[[run]]\nname = \"a\"\npreset = \"smoke\"\n");
    QDir().mkpath(fixture("a-folder"));
    QDir().mkpath(fixture("config-folder.toml"));
    QVector<quint16> tokens(4000);
    for (int i = 0; i < tokens.size(); ++i)
        tokens[i] = quint16(i % 256);
    writeTokens("tokens-train-is-folder", {}, tokens);
    QDir().mkpath(fixture("tokens-train-is-folder/train.bin"));
    writeTokens("tokens-no-validation", tokens, {});
    writeTokens("tokens-id-too-large", tokens + QVector<quint16>{60000}, tokens);
    writeTokens("tokens-too-short", QVector<quint16>(10, 1), tokens);
    write("tokens-odd-size/train.bin", QByteArray(4001, '\1'));
    writeTokens("tokens-odd-size", {}, tokens);
    writeTokens("tokens-dangling-link", {}, tokens);
    QVERIFY(QFile::link(fixture("nowhere.bin"), fixture("tokens-dangling-link/train.bin")));
    {
        SQLite::Database other(fixture("other-app.sqlite").toStdString(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
        other.exec("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)");
        other.exec("INSERT INTO invoices (total) VALUES (12.5)");
    }
    QVERIFY(QFile::copy(m_reference, fixture("future.sqlite")));
    {
        SQLite::Database future(fixture("future.sqlite").toStdString(), SQLite::OPEN_READWRITE);
        future.exec("PRAGMA user_version = 99");
    }
    QFile reference(m_reference);
    QVERIFY(reference.open(QIODevice::ReadOnly));
    const QByteArray study = reference.readAll();
    write("truncated.sqlite", study.left(8192));
    QByteArray damaged = study;
    damaged.replace(3 * 4096, 8192, garbage.repeated(2));
    write("damaged.sqlite", damaged);
    write("hand-edited-seed.sqlite", study);
    {
        SQLite::Database edited(fixture("hand-edited-seed.sqlite").toStdString(), SQLite::OPEN_READWRITE);
        edited.exec("UPDATE meta SET value = 'abc' WHERE key = 'study_seed'");
    }
}

void tst_Hostile::hostileInputIsRefusedAndChangesNothing_data()
{
    // {study}: a fresh copy of a study with one completed run, passed as --db or as the study to
    // read; {fixture}: the folder of hostile inputs. Every case must exit with `code` and say
    // `message` (a regular expression) on stderr.
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("message");
    const auto run = [](const QStringList &more) { return QStringList{"run", "--db", "{study}"} + kSmoke + more; };
    const auto set = [&run](const QString &assignment) { return run({"--set", assignment}); };
    const auto data = [&run](const QString &corpus, const QString &path) {
        return run({"--set", "data.corpus=" + corpus, "--set", "data.path=\"" + path + "\""});
    };

    // Arguments.
    QTest::newRow("no command") << QStringList{} << 2 << "A subcommand is required";
    QTest::newRow("unknown command") << QStringList{"train"} << 2 << "unknown command 'train'";
    QTest::newRow("unknown option") << run({"--fast"}) << 2 << "--fast";
    QTest::newRow("a peak on no such device")
        << QStringList{"tune", "--peak-only", "--device", "tpu"} << 2 << "--device: tpu not in";
    QTest::newRow("a peak on a GPU this machine lacks")
        << QStringList{"tune", "--peak-only", "--device", "cuda"} << 2 << testing::cudaRefusal();
    QTest::newRow("a peak on no threads")
        << QStringList{"tune", "--peak-only", "--threads", "0"} << 2 << "--threads: Value 0 not in range";
    QTest::newRow("--set without =") << run({"--set", "train.steps"}) << 2 << "expected key=value";
    QTest::newRow("--set unknown key") << set("train.stpes=3") << 2 << "train.stpes: unknown key";
    QTest::newRow("--set unknown section") << set("nosuch.key=1") << 2 << "nosuch";
    QTest::newRow("--set empty key") << set("=1") << 2 << "--set '=1': expected key=value";
    QTest::newRow("--set not a number") << set("model.width=abc") << 2 << "model.width = \"abc\": expected an integer";
    QTest::newRow("--set negative width") << set("model.width=-5") << 2 << "model.width = -5: must be from";
    QTest::newRow("--set huge steps") << set("train.steps=1e99") << 2 << "train.steps";
    QTest::newRow("--set integer overflow") << set("train.steps=99999999999999999999") << 2 << "train.steps";
    QTest::newRow("--set nan learning rate") << set("train.learning_rate=nan") << 2 << "train.learning_rate";
    QTest::newRow("--set inf learning rate") << set("train.learning_rate=inf") << 2 << "train.learning_rate";
    QTest::newRow("--set unknown precision") << set("precision.mode=\"fp8\"") << 2 << "precision.mode = \"fp8\"";
    QTest::newRow("fp16 on a cpu") << set("precision.mode=\"autocast-fp16\"") << 2 << "needs a CUDA device";
    QTest::newRow("heads do not divide width") << set("model.width=65") << 2 << "divisible by model.heads";
    QTest::newRow("line break in the name") << set("name=\"a\\nb\"") << 2 << "name = .*holds a line break";
    QTest::newRow("rtl override in the name") << set("name=\"x\\u202Etxt.exe\"") << 2 << "bidirectional text control";
    QTest::newRow("escape sequence in the name")
        << set("name=\"\\u001b[2J\"") << 2 << "control character \\(U\\+001B\\)";
    QTest::newRow("name of 201 bytes") << set("name=\"" + QString(201, 'n') + "\"") << 2 << "at most 200 bytes";
    QTest::newRow("budget infGiB") << run({"--memory-budget", "infGiB"}) << 2 << "memory.budget";
    QTest::newRow("budget nanMiB") << run({"--memory-budget", "nanMiB"}) << 2 << "memory.budget";
    QTest::newRow("budget half a byte") << run({"--memory-budget", "0.5B"}) << 2 << "memory.budget";
    QTest::newRow("budget past 64 bits") << run({"--memory-budget", "1e30GiB"}) << 2 << "memory.budget";
    QTest::newRow("budget in words") << run({"--memory-budget", "lots"}) << 2 << "memory.budget = \"lots\"";
    QTest::newRow("repeats 0") << run({"--repeats", "0"}) << 2 << "repeats";
    QTest::newRow("repeats 101") << run({"--repeats", "101"}) << 2 << "repeats";
    QTest::newRow("unknown preset") << QStringList{"run", "--db", "{study}", "--preset", "huge"} << 2 << "huge";
    QTest::newRow("warm-up longer than the run") << set("train.steps=2") << 2 << "memory.warmup_steps";
    QTest::newRow("compare tolerance nan")
        << QStringList{"compare", "{study}", "--tolerance", "nan"} << 2 << "--tolerance nan";
    QTest::newRow("compare tolerance -1")
        << QStringList{"compare", "{study}", "--tolerance", "-1"} << 2 << "--tolerance";
    QTest::newRow("report tolerance inf")
        << QStringList{"report", "{study}", "--format", "json", "--tolerance", "inf"} << 2 << "--tolerance inf";
    QTest::newRow("report format exe") << QStringList{"report", "{study}", "--format", "exe"} << 2 << "exe";
    QTest::newRow("export format xml") << QStringList{"export", "{study}", "--format", "xml"} << 2 << "xml";
    QTest::newRow("show a run that is not there") << QStringList{"show", "{study}", "nosuch"} << 2 << "no run 'nosuch'";
    QTest::newRow("compare a baseline that is not there")
        << QStringList{"compare", "{study}", "--baseline", "nosuch"} << 2 << "nosuch";
    QTest::newRow("report a run that is not there")
        << QStringList{"report", "{study}", "--format", "json", "--runs", "x"} << 2 << "'x'";

    // Config files.
    QTest::newRow("config missing") << run({"--config", "{fixture}/missing.toml"}) << 2 << "missing.toml";
    QTest::newRow("config is a folder") << run({"--config", "{fixture}/config-folder.toml"}) << 2
                                        << "config-folder.toml";
    QTest::newRow("config is binary") << run({"--config", "{fixture}/not-toml.toml"}) << 2 << "not valid TOML";
    QTest::newRow("config unknown section") << run({"--config", "{fixture}/unknown-section.toml"}) << 2 << "nosuch";
    QTest::newRow("config wrong type") << run({"--config", "{fixture}/wrong-type.toml"}) << 2
                                       << "model.width = \"wide\"";
    QTest::newRow("config duplicate key") << run({"--config", "{fixture}/duplicate-key.toml"}) << 2 << "not valid TOML";
    QTest::newRow("config NUL in a name")
        << run({"--config", "{fixture}/nul-in-name.toml"}) << 2 << "control character";
    QTest::newRow("config line break in a name")
        << run({"--config", "{fixture}/newline-in-name.toml"}) << 2 << "line break";
    QTest::newRow("config 1 MiB name") << run({"--config", "{fixture}/long-line.toml"}) << 2 << "at most 200 bytes";
    QTest::newRow("config 5000 nested keys") << run({"--config", "{fixture}/deep.toml"}) << 2 << "config";
    QTest::newRow("config in UTF-16") << run({"--config", "{fixture}/utf16.toml"}) << 2 << "not valid TOML";
    QTest::newRow("config array for a section")
        << run({"--config", "{fixture}/array-for-table.toml"}) << 2 << "'model' must be a table";

    // Data.
    QTest::newRow("text corpus missing") << data("text", "{fixture}/missing.txt") << 2 << "missing.txt";
    QTest::newRow("text corpus is a folder") << data("text", "{fixture}/a-folder") << 2 << "a-folder";
    QTest::newRow("text corpus empty") << data("text", "{fixture}/empty.txt") << 2 << "is empty";
    QTest::newRow("text corpus shorter than a context") << data("text", "{fixture}/short.txt") << 2 << "training";
    QTest::newRow("text corpus is a device") << data("text", "/dev/zero") << 2 << "/dev/zero";
    QTest::newRow("tokens train.bin is a folder")
        << data("tokens", "{fixture}/tokens-train-is-folder") << 2 << "train.bin' is not a regular file";
    QTest::newRow("tokens val.bin missing") << data("tokens", "{fixture}/tokens-no-validation") << 2 << "val.bin";
    QTest::newRow("tokens id above the vocabulary")
        << data("tokens", "{fixture}/tokens-id-too-large") << 2 << "holds id 60000";
    QTest::newRow("tokens odd size") << data("tokens", "{fixture}/tokens-odd-size") << 2 << "odd size";
    QTest::newRow("tokens shorter than a context") << data("tokens", "{fixture}/tokens-too-short") << 2 << "training";
    QTest::newRow("tokens dangling link") << data("tokens", "{fixture}/tokens-dangling-link") << 2 << "train.bin";
    QTest::newRow("tokens folder is a file") << data("tokens", "{fixture}/notes.txt") << 2 << "notes.txt";

    // Study files.
    const auto db = [](const QString &path) { return QStringList{"run", "--db", path} + kSmoke; };
    QTest::newRow("db is a folder") << db("{fixture}/a-folder") << 2 << "a-folder' is a folder";
    QTest::newRow("db is /dev/null") << db("/dev/null") << 2 << "/dev/null' is not a regular file";
    QTest::newRow("db in a missing folder") << db("{fixture}/no/such/study.sqlite") << 2 << "does not exist";
    QTest::newRow("db is a text file") << db("{fixture}/notes.txt") << 2 << "not an SQLite database";
    QTest::newRow("db is random bytes") << db("{fixture}/garbage.bin") << 2 << "not an SQLite database";
    QTest::newRow("db of another application") << db("{fixture}/other-app.sqlite") << 2 << "another application";
    QTest::newRow("db from the future") << db("{fixture}/future.sqlite") << 2 << "schema version 99";
    QTest::newRow("db truncated") << db("{fixture}/truncated.sqlite") << 2 << "malformed";
    QTest::newRow("db damaged") << db("{fixture}/damaged.sqlite") << 2 << "malformed";
    QTest::newRow("db with a hand-edited seed") << db("{fixture}/hand-edited-seed.sqlite") << 2 << "study_seed 'abc'";
    QTest::newRow("runs of a missing study")
        << QStringList{"runs", "{fixture}/missing.sqlite"} << 2 << "does not exist";
    QTest::newRow("runs of another application")
        << QStringList{"runs", "{fixture}/other-app.sqlite"} << 2 << "another application";
    QTest::newRow("show a damaged study") << QStringList{"show", "{fixture}/damaged.sqlite", "1"} << 2 << "malformed";
    QTest::newRow("compare a truncated study")
        << QStringList{"compare", "{fixture}/truncated.sqlite"} << 2 << "malformed";
    QTest::newRow("report random bytes") << QStringList{"report", "{fixture}/garbage.bin", "--format", "json",
                                                        "-o",     "{study}.json"}
                                         << 2 << "not an SQLite database";
    QTest::newRow("export a study from the future")
        << QStringList{"export", "{fixture}/future.sqlite"} << 2 << "schema version 99";
    QTest::newRow("study plan not TOML") << QStringList{"study", "{fixture}/plan-not-toml.toml", "--db", "{study}"} << 2
                                         << "plan-not-toml.toml";
    QTest::newRow("study plan without runs")
        << QStringList{"study", "{fixture}/plan-no-runs.toml", "--db", "{study}"} << 2 << "run";
    QTest::newRow("study plan unknown key")
        << QStringList{"study", "{fixture}/plan-unknown-key.toml", "--db", "{study}"} << 2 << "colour";
    QTest::newRow("study plan nan tolerance")
        << QStringList{"study", "{fixture}/plan-nan-tolerance.toml", "--db", "{study}"} << 2 << "tolerance";
    QTest::newRow("study plan zero repeats")
        << QStringList{"study", "{fixture}/plan-zero-repeats.toml", "--db", "{study}"} << 2 << "repeats";
    // A path Slurm's log file pattern cannot hold as a literal: refused before the study is made.
    QTest::newRow("a study for Slurm whose path holds a newline")
        << QStringList{"study", "{fixture}/plan-one-run.toml", "--db", "{fixture}/new\nline.sqlite", "--scheduler",
                       "slurm"}
        << 2 << "holds a newline, which Slurm cannot take";
    QTest::newRow("a study for Slurm whose path holds a backslash")
        << QStringList{"study", "{fixture}/plan-one-run.toml", "--db", "{fixture}/back\\slash.sqlite", "--scheduler",
                       "slurm"}
        << 2 << "holds a backslash, which Slurm cannot take";

    // Runs that cannot fit: refused before anything is written or measured.
    QTest::newRow("predicted above the budget")
        << run({"--memory-budget", "64KiB"}) << 2 << "predicted to need .* above memory.budget = \"64KiB\"";
    QTest::newRow("microbatch of a million") << set("train.microbatch=1000000") << 2 << "available";
    QTest::newRow("context of 65536") << set("model.context_length=65536") << 2 << "available";
    QTest::newRow("width of 65536") << set("model.width=65536") << 2 << "available";
}

void tst_Hostile::hostileInputIsRefusedAndChangesNothing()
{
    QFETCH(QStringList, arguments);
    QFETCH(int, code);
    QFETCH(QString, message);
    const QString study = studyCopy(QString::fromUtf8(QTest::currentDataTag()).replace(' ', '-'));
    for (QString &a : arguments)
        a.replace("{study}", study).replace("{fixture}", m_dir.filePath("fixture"));
    const StudyRows before = studyRows(study);
    const QByteArray hash = sha256(study);
    const QMap<QString, QByteArray> inputs = folderState(m_dir.filePath("fixture"));

    const Result r = runOptlog(arguments);
    const StudyRows after = studyRows(study);
    const bool unchanged = sha256(study) == hash && after.rows == before.rows && after.integrity == "ok";
    const bool reads = QStringList{"runs", "show", "compare", "report", "export"}.contains(arguments.value(0));
    const QMap<QString, QByteArray> inputsAfter = folderState(m_dir.filePath("fixture"));
    const bool inputsUnchanged = (reads ? withoutReadersFiles(inputsAfter, inputs, m_dir.filePath("fixture"))
                                        : inputsAfter)
                                 == inputs;
    const bool said = QRegularExpression(message).match(r.err).hasMatch();
    record(!r.crashed && r.exitCode == code && said, r.crashed, !unchanged || !inputsUnchanged);

    QVERIFY2(!r.crashed, "ended by a signal or did not end");
    QVERIFY2(r.exitCode == code, qPrintable(QString("exit %1, expected %2: %3").arg(r.exitCode).arg(code).arg(r.err)));
    QVERIFY2(said, qPrintable("stderr does not match '" + message + "': " + r.err));
    QVERIFY2(!r.err.contains("terminate called") && !r.err.contains("Aborted"), qPrintable(r.err));
    QVERIFY2(unchanged, "the study changed");
    QVERIFY2(inputsUnchanged, "an input file or folder changed, or a file was left beside one");
}

void tst_Hostile::aStudyFromSomeoneElseRunsNothing_data()
{
    optlog::testing::addPoisonedPlaces();
}

void tst_Hostile::aStudyFromSomeoneElseRunsNothing()
{
    // Every command that reaches a study's runs on other machines: each refuses before ssh runs,
    // naming the study, the run and the value, exit 2, and writes nothing (no follower's lock, no
    // byte of the study). Without the checks, OpenSSH would have read the first two as options.
    QFETCH(QString, host);
    QFETCH(QString, optlog);
    QFETCH(QString, refusal);
    QFETCH(qint64, remoteRun);
    const QString folder = m_dir.filePath("poisoned/" + QString::fromUtf8(QTest::currentDataTag()).replace(' ', '-'));
    QVERIFY(QDir().mkpath(folder));
    const QString study = folder + "/study.sqlite", marker = folder + "/marker";
    optlog::testing::writePoisonedStudy(study, host, optlog, remoteRun, marker);
    const QMap<QString, QByteArray> before = folderState(folder);
    for (const QStringList &command : QList<QStringList>{{"follow", study},
                                                         {"gather", study},
                                                         {"cancel", study},
                                                         {"cancel", study, "elsewhere"},
                                                         {"run", "--resume", study, "elsewhere"}}) {
        const Result r = runOptlog(command);
        const bool said = r.err.contains("study '" + study + "', run 2: ") && r.err.contains(refusal)
                          && r.err.contains("nothing was run");
        const bool unchanged = withoutReadersFiles(folderState(folder), before, folder) == before; // the marker too
        record(!r.crashed && r.exitCode == 2 && said, r.crashed, !unchanged);
        const QString what = command.join(' ') + ": " + r.err;
        QVERIFY2(!r.crashed && r.exitCode == 2, qPrintable(what));
        QVERIFY2(said, qPrintable(what));
        QVERIFY2(unchanged && !QFile::exists(marker), qPrintable("written: " + what));
    }
}

void tst_Hostile::unwritableStudyIsReadButNotWritten()
{
    // Another user's study, in a folder that user may not write: readable, not writable.
    if (geteuid() != 0 || QStandardPaths::findExecutable("setpriv").isEmpty())
        QSKIP("needs root and setpriv(1) to run optlog as another user");
    const QString folder = m_dir.filePath("read-only");
    QDir().mkpath(folder);
    const QString study = folder + "/study.sqlite";
    QVERIFY(QFile::copy(m_reference, study));
    QVERIFY(QFile::setPermissions(study, QFile::ReadOwner | QFile::ReadGroup | QFile::ReadOther));
    QVERIFY(QFile::setPermissions(m_dir.path(), QFile::permissions(m_dir.path()) | QFile::ExeOther | QFile::ReadOther));
    QVERIFY(QFile::setPermissions(folder, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner | QFile::ReadOther
                                              | QFile::ExeOther));
    const QByteArray hash = sha256(study);
    const auto asNobody = [](const QStringList &arguments) {
        return runProgram("setpriv", QStringList{"--reuid=65534", "--regid=65534", "--clear-groups",
                                                 optlog::testing::optlogBinary()}
                                         + arguments);
    };
    const Result version = asNobody({"--version"});
    if (version.exitCode != 0 && version.err.contains("error while loading shared libraries"))
        QSKIP("user 65534 cannot load this build's LibTorch: a virtual environment in root's home holds it");
    const Result runs = asNobody({"runs", study});
    const QString reports = m_dir.filePath("reports");
    QDir().mkpath(reports);
    QVERIFY(QFile::setPermissions(reports, QFileDevice::Permissions(0x7777)));
    const Result report = asNobody({"report", study, "--format", "json", "-o", reports + "/report.json"});
    const Result train = asNobody(QStringList{"run", "--db", study} + kSmoke);
    const bool unchanged = sha256(study) == hash;
    record(!runs.crashed && runs.exitCode == 0, runs.crashed, !unchanged);
    record(!report.crashed && report.exitCode == 0, report.crashed, !unchanged);
    record(!train.crashed && train.exitCode == 2, train.crashed, !unchanged);
    QVERIFY2(runs.exitCode == 0 && runs.out.contains("completed"), qPrintable(runs.err));
    QVERIFY2(report.exitCode == 0 && report.out.contains("report.json"), qPrintable(report.err));
    QCOMPARE(train.exitCode, 2);
    QVERIFY2(train.err.contains("cannot be written (Permission denied)"), qPrintable(train.err));
    QCOMPARE(sha256(study), hash);
    QCOMPARE(QDir(folder).entryList(QDir::Files), QStringList{"study.sqlite"}); // no -wal or -shm left
}

void tst_Hostile::immutableStudyIsRefusedForWriting()
{
    // An immutable file (chattr +i) refuses writes even to root, which SQLite notices only at the
    // first write: the run must be refused at once, not abort when it stores its first row.
    const QString study = studyCopy("immutable");
    QProcess chattr;
    chattr.start("chattr", {"+i", study});
    if (!chattr.waitForFinished() || chattr.exitStatus() != QProcess::NormalExit || chattr.exitCode() != 0)
        QSKIP("chattr +i is not available or not allowed on this file system");
    const QByteArray hash = sha256(study);
    const Result train = runOptlog(QStringList{"run", "--db", study} + kSmoke);
    const Result runs = runOptlog({"runs", study});
    QProcess::execute("chattr", {"-i", study});
    record(!train.crashed && train.exitCode == 2, train.crashed, sha256(study) != hash);
    record(!runs.crashed && runs.exitCode == 0, runs.crashed, sha256(study) != hash);
    QCOMPARE(train.exitCode, 2);
    QVERIFY2(train.err.contains("cannot be written (Operation not permitted)"), qPrintable(train.err));
    QVERIFY2(runs.exitCode == 0 && runs.out.contains("completed"), qPrintable(runs.err));
    QCOMPARE(sha256(study), hash);
}

void tst_Hostile::killAtAnyPointKeepsEveryCommittedRow()
{
    // SIGKILL after 1, 5, 20 and 60 steps and during a validation: every row a reader saw
    // committed before the kill is still there, the file is intact, and the next writer marks the
    // run crashed.
    for (const int steps : testing::scenario::kKilledAfterSteps) {
        const QString study = studyCopy("kill-" + QString::number(steps));
        QProcess engine;
        engine.start(optlog::testing::optlogBinary(),
                     QStringList{"run", "--db", study, "--set", "train.steps=100000", "--set", "train.eval_interval=7"}
                         + kSmoke);
        QElapsedTimer timer;
        timer.start();
        qint64 seen = 0;
        while (seen < steps && timer.elapsed() < 60000) {
            QThread::msleep(20);
            try {
                const Store reader(study.toStdString(), Store::Access::ReadOnly);
                if (reader.runs().size() > 1) // the reference run is the first
                    seen = qint64(reader.metrics(reader.runs().back().id).size());
            } catch (const StoreError &) {
            }
        }
        const qint64 committed = studyRows(study).rows.value("metrics");
        engine.kill();
        QVERIFY(engine.waitForFinished(30000));
        const StudyRows after = studyRows(study);
        const bool kept = after.rows.value("metrics") >= committed && after.integrity == "ok";
        Store writer(study.toStdString());
        const RunRecord run = writer.runs().back();
        record(kept && run.outcome == Outcome::Crashed, false, !kept);
        QVERIFY2(seen >= steps, "the engine did not get going");
        QVERIFY(kept);
        QCOMPARE(std::string(outcomeName(run.outcome)), std::string("crashed"));
        QCOMPARE(writer.runs().front().outcome, std::optional<Outcome>(Outcome::Completed)); // the earlier run untouched
    }
}

void tst_Hostile::terminateCancelsInEveryPhase_data()
{
    QTest::addColumn<QString>("phase");
    QTest::newRow("start-up") << "start-up";
    QTest::newRow("training") << "training";
    QTest::newRow("validation") << "validation";
}

void tst_Hostile::terminateCancelsInEveryPhase()
{
    QFETCH(QString, phase);
    const QString study = studyCopy("terminate-" + phase);
    QProcess engine;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    QTemporaryDir cache; // an empty cache: start-up measures the matmul peak, which takes a while
    environment.insert("XDG_CACHE_HOME", cache.path());
    engine.setProcessEnvironment(environment);
    engine.start(optlog::testing::optlogBinary(),
                 QStringList{"run", "--db", study, "--jsonl", "--set", "train.steps=100000", "--set",
                             "train.eval_interval=10", "--set", "data.eval_sequences=2000"}
                     + kSmoke);
    QVERIFY(engine.waitForStarted());
    QElapsedTimer timer;
    timer.start();
    if (phase == "start-up") {
        // Past loading the libraries (seconds under a sanitizer), into reading data and measuring the machine.
        QVERIFY(testing::waitUntilItHoldsStopSignals(engine));
        QThread::msleep(300);
        QVERIFY2(!engine.readAllStandardOutput().contains("\"started\""), "start-up was over before the signal");
    } else {
        // Training: after a few steps. Validation: as the step before a validation is reported.
        const QByteArray wanted = phase == "training" ? "\"step\":3," : "\"step\":9,";
        QByteArray out;
        while (!out.contains(wanted) && timer.elapsed() < 60000) {
            engine.waitForReadyRead(100);
            out += engine.readAllStandardOutput();
        }
        QVERIFY2(out.contains(wanted), out.right(500).constData());
    }
    engine.terminate();
    QVERIFY(engine.waitForFinished(60000));
    const bool cancelled = engine.exitStatus() == QProcess::NormalExit && engine.exitCode() == 4;
    const StudyRows after = studyRows(study);
    record(cancelled, engine.exitStatus() != QProcess::NormalExit, after.integrity != "ok");
    QVERIFY2(cancelled,
             qPrintable(QString("exit %1: %2").arg(engine.exitCode()).arg(QString(engine.readAllStandardError()))));
    const Store store(study.toStdString(), Store::Access::ReadOnly);
    if (phase == "start-up") {
        QCOMPARE(store.runs().size(), size_t(1)); // no run was created
    } else {
        const RunRecord run = store.runs().back();
        QCOMPARE(std::string(outcomeName(run.outcome)), std::string("cancelled"));
        QCOMPARE(run.outcomeStep, store.metrics(run.id).back().step); // every step was flushed
        if (phase == "validation")
            QVERIFY(!store.validation(run.id).empty()); // the validation in progress finished and was kept
    }
}

// A signal handler that runs on a thread inside oneDNN's sgemm corrupts the heap (docs/benchmarks.md,
// "Stopped runs that aborted"). So while an engine trains, every thread holds the stop signals but
// the one that waits for them in sigtimedwait, and no handler of theirs can run on a thread in a
// kernel.
void tst_Hostile::noTrainingThreadRunsAStopHandler()
{
    const QString study = studyCopy("thread-masks");
    QProcess engine;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.remove("OMP_WAIT_POLICY"); // so that it re-executes, as a run from a fresh shell does
    environment.remove("OPTLOG_SET_VARIABLES");
    engine.setProcessEnvironment(environment);
    engine.start(optlog::testing::optlogBinary(),
                 QStringList{"run", "--db", study, "--jsonl", "--set", "train.steps=100000"} + kSmoke);
    QVERIFY(engine.waitForStarted());
    QByteArray out;
    QElapsedTimer timer;
    timer.start();
    while (!out.contains("\"step\":3,") && timer.elapsed() < 60000) {
        engine.waitForReadyRead(100);
        out += engine.readAllStandardOutput();
    }
    QVERIFY2(out.contains("\"step\":3,"), out.right(500).constData());
    const QString tasks = QString("/proc/%1/task").arg(engine.processId());
    QStringList takers;
    int threads = 0;
    for (const QString &thread : QDir(tasks).entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        ++threads;
        QFile status(tasks + "/" + thread + "/status"), call(tasks + "/" + thread + "/syscall");
        if (!status.open(QIODevice::ReadOnly) || !call.open(QIODevice::ReadOnly))
            continue; // it ended meanwhile
        const quint64 mask = testing::signalMask(QString::fromLatin1(status.readAll()), "SigBlk");
        const bool holds = (mask >> (SIGTERM - 1) & 1) && (mask >> (SIGINT - 1) & 1);
        const QByteArray inCall = call.readAll().split(' ').value(0).trimmed();
        if (!holds)
            takers << thread + (inCall == QByteArray::number(SYS_rt_sigtimedwait) ? " (waiting)" : " (" + inCall + ")");
    }
    engine.terminate();
    QVERIFY(engine.waitForFinished(60000));
    QVERIFY2(threads > 1, "the engine trained on one thread: nothing to check");
    QCOMPARE(takers.size(), 1); // the waiting thread
    QVERIFY2(takers.front().endsWith("(waiting)"), qPrintable(takers.join(", ")));
    QCOMPARE(engine.exitCode(), 4);
}

void tst_Hostile::fullDiskEndsTheRunFailedWithItsCause()
{
    // A small tmpfs in a mount namespace of its own: the study (about 84 KiB new), its write-ahead log
    // and the run's 64 KiB reserve fill it mid-run.
    if (geteuid() != 0 || QStandardPaths::findExecutable("unshare").isEmpty())
        QSKIP("needs root and unshare(1) to mount a small file system");
    const QString folder = m_dir.filePath("full-disk");
    QDir().mkpath(folder);
    const QString script
        = QString("mount -t tmpfs -o size=240k tmpfs '%1' && cd '%1' && '%2' run --db study.sqlite --jsonl "
                  "--set train.steps=5000 --set train.eval_interval=50 %3; code=$?; "
                  "'%2' runs study.sqlite; exit $code")
              .arg(folder, optlog::testing::optlogBinary(), kSmoke.join(' '));
    QProcess shell;
    shell.start("unshare", {"--mount", "--propagation", "private", "sh", "-c", script});
    QVERIFY(shell.waitForFinished(180000));
    const QString out = QString::fromUtf8(shell.readAllStandardOutput());
    const QString err = QString::fromUtf8(shell.readAllStandardError());
    if (err.contains("mount: ") || err.contains("unshare: "))
        QSKIP(qPrintable("this machine does not allow a tmpfs mount here: " + err));
    const bool failed = shell.exitStatus() == QProcess::NormalExit && shell.exitCode() == 1;
    record(failed && out.contains("database or disk is full"), shell.exitStatus() != QProcess::NormalExit, false);
    QVERIFY2(failed, qPrintable(err));
    // The cause is in the finished event, and stored: `optlog runs` shows the run failed, not crashed.
    QVERIFY2(out.contains("\"event\":\"finished\"") && out.contains("database or disk is full"),
             qPrintable(out.right(800)));
    QVERIFY2(QRegularExpression("\\n +1 +smoke +failed at step").match(out).hasMatch(), qPrintable(out.right(800)));
    QVERIFY2(err.contains("the study stopped taking the run's rows"), qPrintable(err));
}

void tst_Hostile::fileSizeLimitEndsTheRunFailedWithItsCause()
{
    // A file-size limit (ulimit -f, in sh's 512-byte blocks: 100 KiB) makes a write fail as an I/O
    // error, without privileges. A new study takes about 84 KiB, so the limit falls during training.
    const QString folder = m_dir.filePath("size-limit");
    QDir().mkpath(folder);
    const QString script = QString("cd '%1' && ulimit -f 200 && exec '%2' run --db study.sqlite --set train.steps=5000 "
                                   "--set train.eval_interval=50 %3")
                               .arg(folder, optlog::testing::optlogBinary(), kSmoke.join(' '));
    QProcess shell;
    shell.start("sh", {"-c", script});
    QVERIFY(shell.waitForFinished(180000));
    const QString err = QString::fromUtf8(shell.readAllStandardError());
    const bool failed = shell.exitStatus() == QProcess::NormalExit && shell.exitCode() == 1;
    record(failed, shell.exitStatus() != QProcess::NormalExit, false);
    QVERIFY2(failed, qPrintable(QString("exit %1: %2").arg(shell.exitCode()).arg(err)));
    QVERIFY2(err.contains("the study stopped taking the run's rows") && err.contains("disk I/O error"), qPrintable(err));
    const Store store((folder + "/study.sqlite").toStdString(), Store::Access::ReadOnly);
    const RunRecord run = store.runs().back();
    QCOMPARE(std::string(outcomeName(run.outcome)), std::string("failed"));
    QVERIFY(!store.metrics(run.id).empty()); // what was committed before stays
}

void tst_Hostile::fuzzedConfigsNeverCrashOrChangeARefusedStudy()
{
    // Seeded random configs and --set strings through the real binary. Short runs: whatever the
    // fuzzer sets, the steps and the memory are bounded after it.
    testing::ConfigFuzzer fuzzer(1130);
    int refused = 0, ran = 0;
    for (int i = 0; i < testing::scenario::kFuzzedConfigs; ++i) {
        const QString study = studyCopy("fuzz-" + QString::number(i));
        QStringList arguments = QStringList{"run", "--db", study} + kSmoke;
        if (i % 2 == 0) {
            const QString config = QFileInfo(study).path() + "/fuzz.toml";
            QFile file(config);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(QByteArray::fromStdString(i % 4 == 0 ? fuzzer.document() : fuzzer.plausibleAssignment()));
            file.close();
            arguments << "--config" << config;
        }
        // Hostile assignments in some cases, plausible ones in others, so that some configs run.
        for (int k = 0; k < 1 + i % 3; ++k)
            arguments << "--set"
                      << QString::fromStdString(i % 3 == 1 ? fuzzer.assignment() : fuzzer.plausibleAssignment());
        arguments << "--set"
                  << "train.steps=4"
                  << "--set"
                  << "memory.warmup_steps=1"
                  << "--set"
                  << "runtime.threads=1"
                  << "--set"
                  << "train.eval_interval=2"
                  << "--memory-budget"
                  << "96MiB";
        const StudyRows before = studyRows(study);
        const QByteArray hash = sha256(study);
        const Result r = runOptlog(arguments, 180000);
        const StudyRows after = studyRows(study);
        const bool refusedCleanly = r.exitCode != 2 || (sha256(study) == hash && after.rows == before.rows);
        const bool lost = after.integrity != "ok" || after.rows.value("metrics") < before.rows.value("metrics");
        record(!r.crashed && r.exitCode >= 0 && r.exitCode <= 5 && refusedCleanly, r.crashed, lost || !refusedCleanly);
        (r.exitCode == 2 ? refused : ran) += 1;
        QVERIFY2(!r.crashed, qPrintable("case " + QString::number(i) + " ended by a signal: " + arguments.join(' ')));
        QVERIFY2(r.exitCode >= 0 && r.exitCode <= 5, qPrintable(QString("case %1: exit %2").arg(i).arg(r.exitCode)));
        QVERIFY2(!r.err.contains("terminate called"), qPrintable(r.err));
        QVERIFY2(refusedCleanly, qPrintable("case " + QString::number(i) + ": a refusal changed the study"));
        QVERIFY2(!lost, qPrintable("case " + QString::number(i) + ": the study lost rows or integrity"));
    }
    qInfo("fuzzed runs through the binary: %d refused, %d ran", refused, ran);
    QVERIFY(refused > 0 && ran > 0);
}

void tst_Hostile::cleanupTestCase()
{
    const QString figures
        = QString("fault and fuzz suite: %1 cases tried, %2 handled as documented, %3 crashes, %4 with data lost")
              .arg(g_figures.tried)
              .arg(g_figures.handled)
              .arg(g_figures.crashes)
              .arg(g_figures.dataLost);
    qInfo("%s", qPrintable(figures));
    QFile out(QDir(QCoreApplication::applicationDirPath()).filePath("fault-figures.txt"));
    if (out.open(QIODevice::WriteOnly))
        out.write(figures.toUtf8() + "\n");
}

QTEST_GUILESS_MAIN(tst_Hostile)
#include "tst_hostile.moc"
