// SPDX-License-Identifier: MIT
// Runs on another machine over real OpenSSH: a second host made by tests/remote/sshhost.sh (Debian's
// sshd, with keys it makes), on the loopback and, where this machine lets it, in a network
// namespace of its own whose link can be unplugged. The real `optlog` on both sides: the run
// trains detached on the host into a study there, and its rows come back into the laptop's study
// over SSH. Skipped, saying why, where sshd cannot start; never passed without it.
#include "core/store/remoteruns.h"
#include "core/store/store.h"
#include "core/store/weights.h"
#include "tests/common/enginebinary.h"
#include "tests/common/files.h"
#include "tests/common/poisonedplaces.h"
#include "tests/common/scenariosizes.h"
#include "tests/common/testpaths.h"
#ifdef OPTLOG_TEST_WORKBENCH // the build without the workbench tests the CLI's side alone
#include "ui/mainwindow.h"
#include "ui/monitorview.h"
#include "ui/runplacechooser.h"
#include "ui/runqueue.h"
#include "ui/runsview.h"
#include "ui/studywatcher.h"

#include <QStatusBar>
#include <QTableView>
#endif

#include <QDir>
#include <QProcess>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QtTest>
#include <csignal>
#include <filesystem>

using namespace optlog;
using optlog::testing::Result;
using optlog::testing::runOptlog;
using optlog::testing::writtenFile;

namespace {

const QString kHost = QStringLiteral("optlog-test-host");
const QStringList kSmoke = {"--preset", "smoke", "--set", "data.corpus=generated"};

QString number(double value)
{
    return std::isnan(value) ? QStringLiteral("nan") : QString::number(value, 'g', 17);
}

// Every row of a run that following must bring back as the host stored it, as text: its steps,
// validations, memory by role, events (with their times) and outcome, and its environment.
QString rowsOf(const Store &store, int64_t runId)
{
    QStringList lines;
    for (const StepMetrics &m : store.metrics(runId))
        lines << QStringList{QString::number(m.step),
                             QString::number(m.tokens),
                             number(m.trainLoss),
                             number(m.learningRate),
                             number(m.gradNorm),
                             number(m.stepSeconds),
                             number(m.tokensPerSecond),
                             number(m.lossScale),
                             QString::number(m.skipped),
                             number(m.machineGflops),
                             m.communicationSeconds ? number(*m.communicationSeconds) : "-"}
                     .join(' ');
    for (const ValidationPoint &v : store.validation(runId))
        lines << QStringList{"validation",   QString::number(v.step),      QString::number(v.tokens),
                             number(v.loss), QString::number(v.sequences), number(v.sequenceSd)}
                     .join(' ');
    for (const MemoryRow &m : store.memory(runId))
        lines << QStringList{"memory", QString::fromStdString(memoryRoleName(m.role)), QString::fromStdString(m.dtype),
                             QString::number(m.bytes), QString::fromStdString(memorySourceName(m.source))}
                     .join(' ');
    for (const EventRecord &e : store.events(runId))
        lines << QStringList{"event", QString::fromStdString(e.at), eventKindName(e.kind),
                             QString::fromStdString(e.message), QString::number(e.step)}
                     .join(' ');
    const RunRecord run = store.requireRun(runId);
    lines << QStringList{"outcome", outcomeName(run.outcome), QString::number(run.outcomeStep),
                         QString::fromStdString(run.message), QString::fromStdString(run.finishedAt)}
                 .join(' ');
    lines << "environment " + QString::fromStdString(run.environmentJson);
    lines << "dtypes " + QString::fromStdString(run.dtypesJson);
    return lines.join('\n');
}

struct Copies
{
    QString here, there;
    int64_t steps = 0;

    // The first line in which they differ, both ways; empty when they are equal.
    QString difference() const
    {
        const QStringList a = here.split('\n'), b = there.split('\n');
        for (qsizetype i = 0; i < std::max(a.size(), b.size()); ++i)
            if (a.value(i) != b.value(i))
                return QString("line %1 here: %2\nthere: %3").arg(i + 1).arg(a.value(i), b.value(i));
        return {};
    }
};

// The laptop's copy of run `runId` of `study` and the run at its place on the host (the same disk
// here), as text.
Copies copiesOf(const QString &study, int64_t runId)
{
    const Store laptop(study.toStdString(), Store::Access::ReadOnly);
    const std::optional<RemotePlace> place = remotePlace(laptop, runId);
    if (!place)
        return {};
    const Store host(place->study, Store::Access::ReadOnly);
    return {rowsOf(laptop, runId), rowsOf(host, place->runId), int64_t(laptop.metrics(runId).size())};
}

bool integrityOk(const QString &study)
{
    QProcess check;
    check.start("sqlite3", {study, "PRAGMA integrity_check"});
    return check.waitForFinished(30000) && check.readAllStandardOutput().trimmed() == "ok";
}

// The pids of the processes whose parent is `parent` (-1: any) and whose command line holds `text`
// (and `also`, when given).
QList<qint64> childrenRunning(qint64 parent, const QString &text, const QString &also = {})
{
    QList<qint64> found;
    for (const QString &entry : QDir("/proc").entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        bool isPid = false;
        const qint64 pid = entry.toLongLong(&isPid);
        QFile stat("/proc/" + entry + "/stat"), command("/proc/" + entry + "/cmdline");
        if (!isPid || !stat.open(QIODevice::ReadOnly) || !command.open(QIODevice::ReadOnly))
            continue;
        const QString fields = QString::fromUtf8(stat.readAll());
        const QStringList afterName = fields.mid(fields.lastIndexOf(')') + 2).split(' ');
        if (afterName.size() > 1 && (parent < 0 || afterName[1].toLongLong() == parent) && [&] {
                const QString line = QString::fromUtf8(command.readAll()).replace(QChar('\0'), ' ');
                return line.contains(text) && line.contains(also);
            }())
            found << pid;
    }
    return found;
}

// Waits until `condition` holds, asking every 50 ms, at most `timeoutMs`.
template<typename Condition>
bool waitUntil(Condition condition, int timeoutMs)
{
    QElapsedTimer timer;
    timer.start();
    while (timer.elapsed() < timeoutMs) {
        if (condition())
            return true;
        QThread::msleep(50);
    }
    return condition();
}

// The steps the laptop's copy of its newest run holds.
int64_t stepsHere(const QString &study)
{
    try {
        const Store store(study.toStdString(), Store::Access::ReadOnly);
        const std::vector<RemoteRun> runs = remoteRuns(store);
        return runs.empty() ? 0 : int64_t(store.metrics(runs.back().runId).size());
    } catch (const StoreError &) {
        return 0;
    }
}

} // namespace

class tst_Remote : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void aCheckedHostTrainsARunFollowedHereRowForRow();
    void aStudyOnTheHostTrainsItsRunsOneAfterAnother();
    void cutConnectionsLoseNoRowAndRepeatNone();
    void aKilledHostEngineEndsCrashedHere();
    void badHostsAndBadStreamsAreRefusedWithTheStudyIntact();
    void aStartWhoseAnswerIsLostTrainsOnceAndIsFollowed();
    void aRunStoppedOnItsHostIsResumedThereAndFollowedHere();
#ifdef OPTLOG_TEST_WORKBENCH
    void theWorkbenchOpeningAStudyFromSomeoneElseRunsNothing_data();
    void theWorkbenchOpeningAStudyFromSomeoneElseRunsNothing();
    void theWorkbenchRunsOnAHostAndFollowsItThroughACutConnection();
#endif

private:
    // A second host: its folder (sshhost.sh's DIR), and the environment of the laptop's optlog
    // that reaches it (its ssh config; the laptop's own data and config folders).
    struct Host
    {
        QString folder;
        QString skip; // why it could not start; empty when it runs
        QProcessEnvironment laptop;
    };
    Host startHost(const QString &name, bool netns);
    Result optlog(const Host &host, const QStringList &arguments, int timeoutMs = 180000);
    // `optlog run --host` started and left running, its ssh children visible under its pid.
    void startRun(QProcess &run, const Host &host, const QString &study, const QStringList &extra);

    QTemporaryDir m_dir;
    Host m_loopback, m_netns;
};

tst_Remote::Host tst_Remote::startHost(const QString &name, bool netns)
{
    Host host;
    host.folder = m_dir.filePath(name);
    QProcess start;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    // The host's runs start at once, untuned, as the suite's own runs do.
    environment.insert("OPTLOG_SSHHOST_SETENV", "OPTLOG_PROBE_UNTUNED=0");
    start.setProcessEnvironment(environment);
    QStringList arguments = {optlog::testing::sourcePath(QStringLiteral("tests/remote/sshhost.sh")), "start",
                             host.folder};
    if (netns)
        arguments << "--netns";
    start.start("bash", arguments);
    if (!start.waitForFinished(60000))
        qFatal("sshhost.sh start did not end");
    if (start.exitCode() != 0) {
        host.skip = QString::fromUtf8(start.readAllStandardError()).trimmed();
        if (start.exitCode() != 77)
            qFatal("sshhost.sh start %s failed: %s", qPrintable(name), qPrintable(host.skip));
        return host;
    }
    host.laptop = QProcessEnvironment::systemEnvironment();
    host.laptop.insert("OPTLOG_SSH_CONFIG", host.folder + "/ssh_config");
    host.laptop.insert("XDG_CONFIG_HOME", host.folder + "/laptop/config");
    host.laptop.insert("XDG_DATA_HOME", host.folder + "/laptop/data");
    return host;
}

Result tst_Remote::optlog(const Host &host, const QStringList &arguments, int timeoutMs)
{
    return runOptlog(arguments, timeoutMs, host.laptop);
}

void tst_Remote::startRun(QProcess &run, const Host &host, const QString &study, const QStringList &extra)
{
    run.setProcessEnvironment(host.laptop);
    run.start(optlog::testing::optlogBinary(), QStringList{"run", "--host", kHost, "--db", study} + kSmoke + extra);
    QVERIFY(run.waitForStarted());
}

void tst_Remote::initTestCase()
{
    QVERIFY(m_dir.isValid());
    m_loopback = startHost("loopback", false);
    m_netns = startHost("netns", true);
    // Each host knows the optlog under test by its path: `host check` remembers it.
    for (const Host *host : {&m_loopback, &m_netns})
        if (host->skip.isEmpty()) {
            const Result checked = optlog(*host, {"host", "check", kHost, "--optlog", optlog::testing::optlogBinary()});
            QVERIFY2(checked.exitCode == 0, qPrintable(checked.err));
        }
}

void tst_Remote::cleanupTestCase()
{
    for (const Host *host : {&m_loopback, &m_netns})
        if (!host->folder.isEmpty())
            QProcess::execute("bash", {optlog::testing::sourcePath(QStringLiteral("tests/remote/sshhost.sh")), "stop",
                                       host->folder});
}

void tst_Remote::aCheckedHostTrainsARunFollowedHereRowForRow()
{
    if (!m_loopback.skip.isEmpty())
        QSKIP(qPrintable(m_loopback.skip));
    // What `host check` says about the host, in a few lines.
    const Result checked = optlog(m_loopback, {"host", "check", kHost});
    QVERIFY2(checked.exitCode == 0, qPrintable(checked.err));
    for (const char *said : {"reachable", "event format 1", "CPU: ", "GPU", "tuned: ", "free"})
        QVERIFY2(checked.out.contains(said), qPrintable(checked.out));

    const QString study = m_dir.filePath("followed.sqlite");
    const Result ran = optlog(m_loopback, QStringList{"run", "--host", kHost, "--db", study} + kSmoke
                                              + QStringList{"--set", "train.steps=60", "--set", "name=remote"});
    QVERIFY2(ran.exitCode == 0, qPrintable(ran.err));
    QVERIFY2(ran.err.contains("trains on optlog-test-host as run 1 of ") && ran.err.contains("completed"),
             qPrintable(ran.err));
    const Copies copies = copiesOf(study, 1);
    QCOMPARE(copies.steps, int64_t(60));
    QCOMPARE(copies.difference(), QString());
    {
        const Store laptop(study.toStdString(), Store::Access::ReadOnly);
        const RunRecord run = laptop.requireRun(1);
        QVERIFY(run.outcome == Outcome::Completed);
        QVERIFY(!laptop.events(1).empty() && !laptop.memory(1).empty() && !laptop.validation(1).empty());
        QCOMPARE(remotePlace(laptop, 1)->host, kHost.toStdString());
    }

    // A config that names a file here: the file goes to the host once, and the run trains on it.
    QByteArray corpus;
    for (int line = 0; line < 4000; ++line)
        corpus += "line " + QByteArray::number(line * 7919 % 10007) + " of a corpus sent to the host\n";
    const QString text = writtenFile(m_dir, "corpus.txt", corpus);
    const QStringList onText = {"--preset",          "smoke", "--set",         "data.corpus=text", "--set",
                                "data.path=" + text, "--set", "train.steps=10"};
    const Result sent = optlog(m_loopback,
                               QStringList{"run", "--host", kHost, "--db", study, "--set", "name=text"} + onText);
    QVERIFY2(sent.exitCode == 0 && sent.err.contains("sending " + text), qPrintable(sent.err));
    const Result again = optlog(m_loopback,
                                QStringList{"run", "--host", kHost, "--db", study, "--set", "name=text2"} + onText);
    QVERIFY2(again.exitCode == 0 && !again.err.contains("sending"), qPrintable(again.err));
    QCOMPARE(copiesOf(study, 2).difference(), QString());

    // Gathering makes the copy the whole run (numerics and every rank included), once.
    const Result gathered = optlog(m_loopback, {"gather", study});
    QVERIFY2(gathered.exitCode == 0 && gathered.err.contains("3 runs gathered"), qPrintable(gathered.err));
    {
        const Store laptop(study.toStdString(), Store::Access::ReadOnly);
        const std::vector<RemoteRun> runs = remoteRuns(laptop);
        QCOMPARE(runs.size(), size_t(3));
        QVERIFY(!runs[0].gatheredAt.empty());
        const Store host(runs[0].place.study, Store::Access::ReadOnly);
        QCOMPARE(rowsOf(laptop, runs[0].runId), rowsOf(host, runs[0].place.runId));
        QCOMPARE(laptop.numerics(runs[0].runId).size(), host.numerics(runs[0].place.runId).size());
        QCOMPARE(laptop.requireRun(runs[0].runId).name, std::string("remote"));
    }
    const Result regathered = optlog(m_loopback, {"gather", study});
    QVERIFY2(regathered.exitCode == 0 && regathered.err.contains("0 runs gathered"), qPrintable(regathered.err));

    // A run trained here sits beside it, and the two compare as any two runs.
    const Result here = optlog(m_loopback, QStringList{"run", "--db", study} + kSmoke
                                               + QStringList{"--set", "train.steps=60", "--set", "name=here"});
    QVERIFY2(here.exitCode == 0, qPrintable(here.err));
    const Result compared = optlog(m_loopback, {"compare", study});
    QVERIFY2(compared.exitCode == 0 && compared.out.contains("remote") && compared.out.contains("here"),
             qPrintable(compared.out + compared.err));
}

void tst_Remote::aStudyOnTheHostTrainsItsRunsOneAfterAnother()
{
    if (!m_loopback.skip.isEmpty())
        QSKIP(qPrintable(m_loopback.skip));
    const QString plan = writtenFile(m_dir, "two.toml",
                                     "name = \"two\"\nbaseline = \"fp32\"\ntolerance = 0.02\n"
                                     "[[run]]\nname = \"fp32\"\npreset = \"smoke\"\n"
                                     "overrides = [\"data.corpus=generated\", \"train.steps=30\"]\n"
                                     "[[run]]\nname = \"accum2\"\npreset = \"smoke\"\n"
                                     "overrides = [\"data.corpus=generated\", \"train.steps=30\", "
                                     "\"train.microbatch=2\", \"train.accumulation=2\"]\n");
    const QString study = m_dir.filePath("study.sqlite");
    const Result studied = optlog(m_loopback, {"study", plan, "--db", study, "--host", kHost}, 300000);
    QVERIFY2(studied.exitCode == 0, qPrintable(studied.err));
    QVERIFY2(studied.out.contains("accum2"), qPrintable(studied.out)); // the comparison follows
    const Store laptop(study.toStdString(), Store::Access::ReadOnly);
    const std::vector<RemoteRun> remote = remoteRuns(laptop);
    QCOMPARE(remote.size(), size_t(2));
    for (const RemoteRun &run : remote) {
        QVERIFY(laptop.requireRun(run.runId).outcome == Outcome::Completed);
        const Copies copies = copiesOf(study, run.runId);
        QCOMPARE(copies.difference(), QString());
    }
    // Studied again: every run is done, nothing trains.
    const Result again = optlog(m_loopback, {"study", plan, "--db", study, "--host", kHost});
    QVERIFY2(again.exitCode == 0 && again.err.count("already completed") == 2, qPrintable(again.err));
}

void tst_Remote::cutConnectionsLoseNoRowAndRepeatNone()
{
    if (!m_netns.skip.isEmpty())
        QSKIP(qPrintable(m_netns.skip));
    const QString study = m_dir.filePath("cut.sqlite");
    QProcess run;
    startRun(run, m_netns, study,
             {"--set", "train.steps=1000000", "--set", "train.checkpoint_interval=50", "--set", "name=cut"});
    QVERIFY2(waitUntil([&] { return stepsHere(study) >= 5; }, 120000), qPrintable(run.readAllStandardError()));
    // Cuts of the connection: the ssh client killed, as when a laptop's network goes away.
    using optlog::testing::scenario::kConnectionCuts;
    for (int cut = 0; cut < kConnectionCuts; ++cut) {
        QList<qint64> streams;
        QVERIFY(waitUntil([&] { return !(streams = childrenRunning(run.processId(), "--metrics-from")).isEmpty(); },
                          30000));
        const qint64 killed = streams.front();
        ::kill(pid_t(killed), SIGKILL);
        // Followed again: a new connection, and rows that came through it.
        QVERIFY(waitUntil(
            [&] {
                streams = childrenRunning(run.processId(), "--metrics-from");
                return !streams.isEmpty() && streams.front() != killed;
            },
            30000));
        const int64_t before = stepsHere(study);
        QVERIFY2(waitUntil([&] { return stepsHere(study) > before; }, 30000), qPrintable(QString::number(cut)));
    }
    // And the link unplugged: the open connection stalls until ssh gives it up, and reconnecting
    // fails until it is plugged back in.
    QProcess::execute("bash",
                      {optlog::testing::sourcePath(QStringLiteral("tests/remote/sshhost.sh")), "cut", m_netns.folder});
    // Until ssh gives the stalled connection up (its keep-alives: about 8 s) and the run says so.
    const QByteArray kLost = "connection to optlog-test-host lost, reconnecting; last row at step";
    QByteArray said;
    QVERIFY2(waitUntil(
                 [&] {
                     run.waitForReadyRead(0); // takes in what the run wrote, on either channel
                     said += run.readAllStandardError();
                     return said.count(kLost) >= kConnectionCuts + 1;
                 },
                 60000),
             said.right(700).constData());
    const int64_t whileCut = stepsHere(study);
    QCOMPARE(QProcess::execute("bash", {optlog::testing::sourcePath(QStringLiteral("tests/remote/sshhost.sh")),
                                        "restore", m_netns.folder}),
             0);
    QVERIFY(waitUntil([&] { return stepsHere(study) > whileCut; }, 60000));

    // Cancelled from the laptop: the run ends cancelled there, its checkpoint kept, and here.
    const Result cancelled = optlog(m_netns, {"cancel", study, "cut"});
    QVERIFY2(cancelled.exitCode == 0, qPrintable(cancelled.err));
    QVERIFY(run.waitForFinished(120000));
    said += run.readAllStandardError();
    QCOMPARE(run.exitCode(), int(kExitCancelled));
    QVERIFY2(said.contains("reconnected to optlog-test-host"), said.right(700).constData());
    const Copies copies = copiesOf(study, 1);
    QVERIFY(copies.steps > 5);
    QCOMPARE(copies.difference(), QString()); // no row lost, none twice
    const Store laptop(study.toStdString(), Store::Access::ReadOnly);
    QVERIFY(laptop.requireRun(1).outcome == Outcome::Cancelled);
    const Store host(remotePlace(laptop, 1)->study, Store::Access::ReadOnly);
    const std::vector<WeightFile> files = weightFiles(host, remotePlace(laptop, 1)->runId);
    QVERIFY(std::any_of(files.begin(), files.end(), [&](const WeightFile &f) {
        return f.kind == WeightFileKind::Checkpoint && std::filesystem::exists(host.absolutePath(f.path));
    }));
}

void tst_Remote::aKilledHostEngineEndsCrashedHere()
{
    if (!m_loopback.skip.isEmpty())
        QSKIP(qPrintable(m_loopback.skip));
    const QString study = m_dir.filePath("killed.sqlite");
    QProcess run;
    startRun(run, m_loopback, study, {"--set", "train.steps=1000000", "--set", "name=killed"});
    QVERIFY2(waitUntil([&] { return stepsHere(study) >= 5; }, 120000), qPrintable(run.readAllStandardError()));
    int64_t engine = 0;
    {
        const Store laptop(study.toStdString(), Store::Access::ReadOnly);
        engine = laptop.requireRun(1).pid; // the engine's pid on the host: this machine, here
    }
    QVERIFY(engine > 0);
    QCOMPARE(::kill(pid_t(engine), SIGKILL), 0);
    QVERIFY(run.waitForFinished(60000));
    QCOMPARE(run.exitCode(), int(exitCodeFor(Outcome::Crashed)));
    const Copies copies = copiesOf(study, 1);
    QCOMPARE(copies.difference(), QString());
    const Store laptop(study.toStdString(), Store::Access::ReadOnly);
    QVERIFY(laptop.requireRun(1).outcome == Outcome::Crashed);
    QVERIFY2(laptop.requireRun(1).message.find("engine process") != std::string::npos,
             laptop.requireRun(1).message.c_str());
}

void tst_Remote::badHostsAndBadStreamsAreRefusedWithTheStudyIntact()
{
    if (!m_loopback.skip.isEmpty())
        QSKIP(qPrintable(m_loopback.skip));
    // A study with a run in it, which no refusal may change.
    const QString study = m_dir.filePath("intact.sqlite");
    const Result first = optlog(m_loopback, QStringList{"run", "--db", study} + kSmoke
                                                + QStringList{"--set", "train.steps=10", "--set", "name=first"});
    QVERIFY2(first.exitCode == 0, qPrintable(first.err));
    const auto unchanged = [&] {
        const Store store(study.toStdString(), Store::Access::ReadOnly);
        return integrityOk(study) && store.runs().size() == 1 && store.metrics(1).size() == 10;
    };
    const QStringList runThere = QStringList{"run", "--db", study} + kSmoke;

    const Result unreachable = optlog(m_loopback, runThere + QStringList{"--host", "optlog-unreachable-host"});
    QCOMPARE(unreachable.exitCode, 2);
    QVERIFY2(unreachable.err.contains("cannot reach optlog-unreachable-host over SSH"), qPrintable(unreachable.err));
    QVERIFY(unchanged());

    const Result hostile = optlog(m_loopback, runThere + QStringList{"--host", "-oProxyCommand=touch /tmp/x"});
    QCOMPARE(hostile.exitCode, 2);
    QVERIFY2(hostile.err.contains("which ssh would read as an option"), qPrintable(hostile.err));

    const Result without = optlog(m_loopback, {"host", "check", kHost, "--optlog", "/nonexistent/optlog"});
    QCOMPARE(without.exitCode, 2);
    QVERIFY2(without.err.contains("has no optlog at `/nonexistent/optlog`"), qPrintable(without.err));

    // An optlog there that writes a newer event format.
    const QString future = writtenFile(m_dir, "future-optlog",
                                       "#!/bin/sh\necho '{\"event_format\": 2, \"hosted\": \"/tmp\"}'\n");
    QFile::setPermissions(future, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    const Result newer = optlog(m_loopback, {"host", "check", kHost, "--optlog", future});
    QCOMPARE(newer.exitCode, 2);
    QVERIFY2(newer.err.contains("writes event format 2, and this optlog reads format 1"), qPrintable(newer.err));

    // The engine's own pre-flight refuses the run there: that refusal is this command's.
    const Result tooBig = optlog(m_loopback, runThere + QStringList{"--host", kHost, "--memory-budget", "1MiB"});
    QCOMPARE(tooBig.exitCode, 2);
    QVERIFY2(tooBig.err.contains("on optlog-test-host: refused, nothing was started"), qPrintable(tooBig.err));
    QVERIFY(unchanged());

    // An optlog there whose stream is garbage after its first line: refused, the rows kept.
    const QString garbage = writtenFile(
        m_dir, "garbage-optlog",
        "#!/bin/sh\nif [ \"$2\" = stream ]; then echo '{\"event\": \"started\", \"run\": 1}'; echo 'not an event';"
        " exit 0; fi\nexec '"
            + optlog::testing::optlogBinary().toUtf8() + "' \"$@\"\n");
    QFile::setPermissions(garbage, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    const Result checked = optlog(m_loopback, {"host", "check", kHost, "--optlog", garbage});
    QVERIFY2(checked.exitCode == 0, qPrintable(checked.err));
    const Result unread = optlog(m_loopback, runThere
                                                 + QStringList{"--host", kHost, "--set", "train.steps=1000000", "--set",
                                                               "name=garbled"});
    QCOMPARE(unread.exitCode, 2);
    QVERIFY2(unread.err.contains("cannot read the run from optlog-test-host: line 2 of its stream: not JSON"),
             qPrintable(unread.err));
    QVERIFY(integrityOk(study));
    // Its engine trains on there; cancelled through the same optlog, it ends cancelled.
    const Result cancelled = optlog(m_loopback, {"cancel", study, "garbled"});
    QVERIFY2(cancelled.err.contains("asked its engine"), qPrintable(cancelled.err));
    const Result restored = optlog(m_loopback, {"host", "check", kHost, "--optlog", optlog::testing::optlogBinary()});
    QCOMPARE(restored.exitCode, 0);
}

void tst_Remote::aStartWhoseAnswerIsLostTrainsOnceAndIsFollowed()
{
    if (!m_netns.skip.isEmpty())
        QSKIP(qPrintable(m_netns.skip));
    const QString sshhost = optlog::testing::sourcePath(QStringLiteral("tests/remote/sshhost.sh"));
    // The host's engine of a study here, once its start has begun there: the study there is named
    // after this one's stem.
    const auto startedThere = [](const QString &stem) {
        return !childrenRunning(-1, "-" + stem + "-", " --config ").isEmpty();
    };
    const auto oneRunThereLikeHere = [](const QString &study) {
        const Store laptop(study.toStdString(), Store::Access::ReadOnly);
        const Store host(remotePlace(laptop, 1)->study, Store::Access::ReadOnly);
        QCOMPARE(host.runs().size(), size_t(1));
        QCOMPARE(laptop.runs().size(), size_t(1));
        const Copies copies = copiesOf(study, 1);
        QCOMPARE(copies.steps, int64_t(300));
        QCOMPARE(copies.difference(), QString());
    };

    // The host's optlog, holding each start's answer until `release` exists: the answer then comes
    // only after the test has cut the link, or ended this side.
    const QString release = m_dir.filePath("release-starts");
    const QString optlogThere = optlog::testing::optlogBinary();
    const QString held
        = writtenFile(m_dir, "held-optlog",
                      ("#!/bin/sh\nif [ \"$1 $2\" = 'host start' ]; then\n  answer=$('" + optlogThere
                       + "' \"$@\"); code=$?\n  while [ ! -e '" + release
                       + "' ]; do sleep 0.1; done\n  printf '%s\\n' \"$answer\"\n  exit $code\nfi\nexec '" + optlogThere
                       + "' \"$@\"\n")
                          .toUtf8());
    QFile::setPermissions(held, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    const Result checked = optlog(m_netns, {"host", "check", kHost, "--optlog", held});
    QVERIFY2(checked.exitCode == 0, qPrintable(checked.err));
    const auto restoreHost = qScopeGuard([&] {
        QFile(release).open(QIODevice::WriteOnly); // nothing held after the test
        optlog(m_netns, {"host", "check", kHost, "--optlog", optlogThere});
    });

    // The link cut while the host starts the run: the answer is lost, the laptop asks again until
    // the link is back, and the host answers with the run that start made.
    const QString study = m_dir.filePath("lostanswer.sqlite");
    QProcess run;
    startRun(run, m_netns, study, {"--set", "train.steps=300", "--set", "name=lost"});
    QVERIFY2(waitUntil([&] { return startedThere("lostanswer"); }, 60000), qPrintable(run.readAllStandardError()));
    QProcess::execute("bash", {sshhost, "cut", m_netns.folder});
    QByteArray said;
    QVERIFY2(waitUntil(
                 [&] {
                     run.waitForReadyRead(0);
                     said += run.readAllStandardError();
                     return said.contains("no answer from optlog-test-host to the start of run 1");
                 },
                 60000),
             said.constData());
    QCOMPARE(QProcess::execute("bash", {sshhost, "restore", m_netns.folder}), 0);
    QVERIFY(QFile(release).open(QIODevice::WriteOnly));
    QVERIFY(run.waitForFinished(180000));
    said += run.readAllStandardError();
    QVERIFY2(run.exitCode() == 0 && said.contains("completed"), said.constData());
    oneRunThereLikeHere(study);
    if (QTest::currentTestFailed())
        return;

    // This side ended while the host started it: the study holds the copy and its key, and
    // `optlog follow` asks again and follows the one run there.
    QVERIFY(QFile::remove(release));
    const QString orphan = m_dir.filePath("killedstart.sqlite");
    QProcess killed;
    startRun(killed, m_netns, orphan, {"--set", "train.steps=300", "--set", "name=orphan"});
    QVERIFY(waitUntil([&] { return startedThere("killedstart"); }, 60000));
    ::kill(pid_t(killed.processId()), SIGKILL);
    QVERIFY(killed.waitForFinished(30000));
    QVERIFY(QFile(release).open(QIODevice::WriteOnly));
    {
        const Store laptop(orphan.toStdString(), Store::Access::ReadOnly);
        QCOMPARE(remoteRuns(laptop).size(), size_t(1));
        QVERIFY(!remoteRuns(laptop)[0].answered());
        QCOMPARE(remoteRuns(laptop)[0].startKey.size(), size_t(32));
    }
    const Result followed = optlog(m_netns, {"follow", orphan});
    QVERIFY2(followed.exitCode == 0 && followed.err.contains("completed"), qPrintable(followed.err));
    oneRunThereLikeHere(orphan);
}

void tst_Remote::aRunStoppedOnItsHostIsResumedThereAndFollowedHere()
{
    if (!m_netns.skip.isEmpty())
        QSKIP(qPrintable(m_netns.skip));
    using optlog::testing::scenario::kResumedOnHostSteps;
    const QString study = m_dir.filePath("resumed.sqlite");
    QProcess run;
    startRun(run, m_netns, study,
             {"--set", "train.steps=" + QString::number(kResumedOnHostSteps), "--set", "train.checkpoint_interval=50",
              "--set", "name=resumed"});
    QVERIFY2(waitUntil([&] { return stepsHere(study) >= 60; }, 120000), qPrintable(run.readAllStandardError()));
    const Result cancelled = optlog(m_netns, {"cancel", study, "resumed"});
    QVERIFY2(cancelled.exitCode == 0, qPrintable(cancelled.err));
    QVERIFY(run.waitForFinished(120000));
    QCOMPARE(run.exitCode(), int(kExitCancelled));
    QVERIFY(stepsHere(study) < kResumedOnHostSteps);

    // Resumed there from its checkpoint, and followed here through a cut connection.
    QProcess resumed;
    resumed.setProcessEnvironment(m_netns.laptop);
    resumed.start(optlog::testing::optlogBinary(), {"run", "--resume", study, "resumed"});
    QList<qint64> streams;
    QVERIFY(waitUntil([&] { return !(streams = childrenRunning(resumed.processId(), "--metrics-from")).isEmpty(); },
                      60000));
    ::kill(pid_t(streams.front()), SIGKILL);
    QVERIFY(resumed.waitForFinished(300000));
    const QByteArray said = resumed.readAllStandardError();
    QVERIFY2(resumed.exitCode() == 0 && said.contains("resumed on optlog-test-host after step")
                 && said.contains("reconnected to optlog-test-host") && said.contains("completed"),
             said.constData());
    // One run there, trained to its end, and its copy here row for row: nothing twice, nothing lost.
    const Copies copies = copiesOf(study, 1);
    QCOMPARE(copies.steps, int64_t(kResumedOnHostSteps));
    QCOMPARE(copies.difference(), QString());
    const Store laptop(study.toStdString(), Store::Access::ReadOnly);
    QVERIFY(laptop.requireRun(1).outcome == Outcome::Completed);
    QCOMPARE(Store(remotePlace(laptop, 1)->study, Store::Access::ReadOnly).runs().size(), size_t(1));
}

#ifdef OPTLOG_TEST_WORKBENCH
void tst_Remote::theWorkbenchOpeningAStudyFromSomeoneElseRunsNothing_data()
{
    optlog::testing::addPoisonedPlaces();
}

void tst_Remote::theWorkbenchOpeningAStudyFromSomeoneElseRunsNothing()
{
    // It follows a study's runs on other machines as it opens it (`optlog follow`): refused as the
    // commands refuse it (tst_hostile), and said in the status bar. No ssh is needed to refuse.
    QFETCH(QString, host);
    QFETCH(QString, optlog);
    QFETCH(QString, refusal);
    QFETCH(qint64, remoteRun);
    static int row = 0;
    const QString marker = m_dir.filePath(QStringLiteral("marker-%1").arg(++row));
    const QString study = m_dir.filePath(QStringLiteral("poisoned-%1.sqlite").arg(row));
    optlog::testing::writePoisonedStudy(study, host, optlog, remoteRun, marker);
    QStandardPaths::setTestModeEnabled(true);
    MainWindow window(optlog::testing::optlogBinary());
    QVERIFY(window.openStudy(study));
    QTRY_VERIFY2_WITH_TIMEOUT(window.statusBar()->currentMessage().contains(refusal),
                              qPrintable(window.statusBar()->currentMessage()), 30000);
    QVERIFY(window.statusBar()->currentMessage().contains("run 2"));
    QVERIFY(!QFile::exists(marker));
    QVERIFY(!QFile::exists(study + ".followers"));
}

void tst_Remote::theWorkbenchRunsOnAHostAndFollowsItThroughACutConnection()
{
    if (!m_loopback.skip.isEmpty())
        QSKIP(qPrintable(m_loopback.skip));
    // The window's own processes (the queue's engine, the host check) reach the host as the CLI does.
    for (const char *name : {"OPTLOG_SSH_CONFIG", "XDG_CONFIG_HOME", "XDG_DATA_HOME"})
        qputenv(name, m_loopback.laptop.value(name).toUtf8());
    QStandardPaths::setTestModeEnabled(true); // the workbench's settings, not the user's
    // The GUI thread's longest wait between two ticks of a 10 ms timer, while hosts are checked
    // and followed: SSH work beside the window must never hold it for the seconds SSH can take.
    QElapsedTimer sinceTick;
    qint64 longestStall = 0;
    QTimer ticks;
    QObject::connect(&ticks, &QTimer::timeout, [&] {
        if (sinceTick.isValid())
            longestStall = std::max(longestStall, sinceTick.elapsed());
        sinceTick.restart();
    });
    ticks.start(10);

    const QString study = m_dir.filePath("workbench.sqlite");
    MainWindow window(optlog::testing::optlogBinary());
    QVERIFY(window.openStudy(study));
    window.show();
    auto *place = window.findChild<RunPlaceChooser *>();
    QVERIFY(place);
    // A host that never answers: refused with the check's reason, the choice left on this machine.
    QSignalSpy checked(place, &RunPlaceChooser::checked);
    place->addHost(QStringLiteral("optlog-unreachable-host"));
    QTRY_COMPARE_WITH_TIMEOUT(checked.size(), 1, 30000);
    QCOMPARE(checked[0][1].toBool(), false);
    QVERIFY2(checked[0][2].toString().contains("cannot reach optlog-unreachable-host"),
             qPrintable(checked[0][2].toString()));
    QCOMPARE(place->place(), RunPlace::here());
    // "Add a host…" with a Python installs optlog there first (`optlog host setup`): refused with the
    // host's own words for a Python it does not have (or, in a build that made no sdist, because
    // there is nothing to send), and the choice stays.
    place->addHost(kHost, QStringLiteral("/nonexistent/python"));
    QTRY_COMPARE_WITH_TIMEOUT(checked.size(), 2, 30000);
    QCOMPARE(checked[1][1].toBool(), false);
    const QString setup = checked[1][2].toString();
    QVERIFY2(setup.contains("has no Python at `/nonexistent/python`") || setup.contains("carries no sdist"),
             qPrintable(setup));
    QCOMPARE(place->place(), RunPlace::here());
    // The test host, checked and chosen.
    place->addHost(kHost);
    QTRY_COMPARE_WITH_TIMEOUT(place->place(), RunPlace::onHost(kHost), 30000);

    auto *queue = window.findChild<RunQueue *>();
    QVERIFY(queue);
    PlannedRun run;
    run.name = "on the host";
    run.preset = "smoke";
    run.overrides = {"data.corpus=generated", "train.steps=1000000", "train.checkpoint_interval=50"};
    queue->enqueue(run);
    queue->start();
    // The Monitor follows it live, saying where it trains.
    window.showPage(1);
    MonitorView *monitor = window.monitor();
    QTRY_VERIFY_WITH_TIMEOUT(monitor->trainPoints() >= 20, 120000);
    QTRY_VERIFY2_WITH_TIMEOUT(monitor->headerText().contains("on optlog-test-host, followed over SSH"),
                              qPrintable(monitor->headerText()), 30000);
    // The connection cut: the status says so, and the window reconnects by itself.
    const QList<qint64> streams = childrenRunning(queue->runningPid(), "--metrics-from");
    QVERIFY(!streams.isEmpty());
    ::kill(pid_t(streams.front()), SIGKILL);
    QTRY_VERIFY2_WITH_TIMEOUT(window.statusBar()->currentMessage().contains(
                                  "connection to optlog-test-host lost, reconnecting; last row at step"),
                              qPrintable(window.statusBar()->currentMessage()), 30000);
    QTRY_VERIFY2_WITH_TIMEOUT(window.statusBar()->currentMessage().contains("reconnected to optlog-test-host"),
                              qPrintable(window.statusBar()->currentMessage()), 30000);
    const qsizetype seen = monitor->trainPoints();
    QTRY_VERIFY_WITH_TIMEOUT(monitor->trainPoints() > seen + 10, 60000);

    // Cancel, from the Run menu: the run ends cancelled there, and here.
    queue->cancelRunning();
    QTRY_VERIFY_WITH_TIMEOUT(!queue->isRunning(), 60000);
    const Copies copies = copiesOf(study, 1);
    QCOMPARE(copies.difference(), QString());
    QVERIFY(Store(study.toStdString(), Store::Access::ReadOnly).requireRun(1).outcome == Outcome::Cancelled);

    // Resumed there from the Runs list, from its checkpoint, and followed here again.
    QTRY_VERIFY_WITH_TIMEOUT(window.watcher()->snapshot().find(1) && window.watcher()->snapshot().find(1)->isFinished(),
                             30000);
    window.runsView()->table()->selectAll();
    window.resumeOnHostAction()->trigger();
    QVERIFY2(window.statusBar()->currentMessage().contains("Resuming on the host on optlog-test-host"),
             qPrintable(window.statusBar()->currentMessage()));
    QTRY_VERIFY_WITH_TIMEOUT(!Store(study.toStdString(), Store::Access::ReadOnly).requireRun(1).isFinished(), 120000);
    QTRY_VERIFY_WITH_TIMEOUT(stepsHere(study) > copies.steps + 10, 60000);
    queue->cancelRunning();
    QTRY_VERIFY_WITH_TIMEOUT(!queue->isRunning(), 60000);
    const Copies resumed = copiesOf(study, 1);
    QCOMPARE(resumed.difference(), QString());
    const Store store(study.toStdString(), Store::Access::ReadOnly);
    QVERIFY(store.requireRun(1).outcome == Outcome::Cancelled);
    QCOMPARE(Store(remotePlace(store, 1)->study, Store::Access::ReadOnly).runs().size(), size_t(1));
    qInfo("the GUI thread's longest wait between two 10 ms ticks: %lld ms", longestStall);
    QVERIFY2(longestStall < 1000, qPrintable(QString::number(longestStall)));
}
#endif

QTEST_MAIN(tst_Remote)
#include "tst_remote.moc"
