// SPDX-License-Identifier: MIT
// Every process optlog starts is described by a ProgramStart and started by startProgram: the
// input, the outputs, the environment, the process group and whether it dies with its starter are
// what the description says, checked on real children (/bin/sh and what it reads in /proc).
#include "core/contract/outcome.h"
#include "core/contract/program.h"

#include <QtTest>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace optlog;

namespace {

std::string fileText(const QString &path)
{
    std::ifstream in(path.toStdString());
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// Runs `script` with /bin/sh as `start` says, its outputs appended to `log`; its exit code.
int runShell(ProgramStart start, const std::string &script, const QString &log)
{
    start.argv = {"/bin/sh", "-c", script};
    start.output = ProgramOutputs::AppendedToFile;
    start.outputFile = log.toStdString();
    const StartedProgram started = startProgram(start);
    if (started.pid < 0)
        return -1;
    const int status = reapProgram(started.pid).value_or(-1);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

} // namespace

class tst_Program : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void runProgramReadsItsInputAndBothOutputs()
    {
        QTemporaryDir dir;
        const QString input = dir.filePath("in");
        std::ofstream(input.toStdString()) << "hello";
        // "sh" is looked up on PATH, as runProgram's programs (ssh, sbatch) are.
        const ProgramOutput result = runProgram({"sh", "-c", "cat; echo oops >&2; exit 3"}, {}, input.toStdString());
        QCOMPARE(result.exitCode, 3);
        QCOMPARE(result.out, std::string("hello"));
        QCOMPARE(result.err, std::string("oops\n"));
    }

    void variablesReplaceOursOfTheSameName()
    {
        QTemporaryDir dir;
        const QString log = dir.filePath("log");
        qputenv("TST_PROGRAM_VARIABLE", "ours");
        ProgramStart start;
        start.variables = {{"TST_PROGRAM_VARIABLE", "theirs"}};
        QCOMPARE(runShell(start, "echo \"$TST_PROGRAM_VARIABLE\"; env | grep -c '^TST_PROGRAM_VARIABLE='; echo $HOME",
                          log),
                 0);
        QCOMPARE(fileText(log), "theirs\n1\n" + qEnvironmentVariable("HOME").toStdString() + "\n");
        qunsetenv("TST_PROGRAM_VARIABLE");
    }

    void anAppendedLogKeepsWhatItHeldAndTakesBothOutputs()
    {
        QTemporaryDir dir;
        const QString log = dir.filePath("engine.log");
        std::ofstream(log.toStdString()) << "before\n";
        QCOMPARE(runShell({}, "echo out; echo err >&2", log), 0);
        QCOMPARE(fileText(log), std::string("before\nout\nerr\n"));
    }

    // A detached engine (`optlog host start`) leads a session of its own, and what its starter
    // blocks or ignores (a terminal's SIGHUP, say) does not reach it. Each program reads its own
    // /proc/self: a shell reading its own would see what it blocks while it waits for its child.
    void aSessionOfItsOwnWithSignalsAtTheirDefaults()
    {
        QTemporaryDir dir;
        const QString log = dir.filePath("log");
        sigset_t blocked, before;
        sigemptyset(&blocked);
        sigaddset(&blocked, SIGTERM);
        sigprocmask(SIG_BLOCK, &blocked, &before);
        const auto ignored = std::signal(SIGHUP, SIG_IGN);
        ProgramStart start;
        start.lookUpOnPath = true;
        start.group = ProcessGroup::OwnSession;
        start.output = ProgramOutputs::AppendedToFile;
        start.outputFile = log.toStdString();
        std::vector<int> codes;
        // Fields 1 and 6 of /proc/PID/stat are its pid and its session (cut's name holds no space).
        for (const std::vector<std::string> &argv :
             {std::vector<std::string>{"cut", "-d", " ", "-f", "1,6", "/proc/self/stat"},
              std::vector<std::string>{"grep", "-E", "^Sig(Blk|Ign):", "/proc/self/status"}}) {
            start.argv = argv;
            codes.push_back(waitForProgram(startProgram(start).pid));
        }
        std::signal(SIGHUP, ignored);
        sigprocmask(SIG_SETMASK, &before, nullptr);
        QCOMPARE(codes, std::vector<int>({0, 0}));
        const QStringList lines = QString::fromStdString(fileText(log)).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 3);
        QCOMPARE(lines.at(0).section(' ', 1), lines.at(0).section(' ', 0, 0)); // its session is its own
        // Signal N is bit N-1 of the masks (the C library keeps a few of its own ignored).
        const auto has = [](const QString &line, int signal) {
            return (line.section('\t', 1).toULongLong(nullptr, 16) >> (signal - 1)) & 1;
        };
        QVERIFY2(!has(lines.at(1), SIGTERM), qPrintable(lines.at(1)));
        QVERIFY2(!has(lines.at(2), SIGHUP), qPrintable(lines.at(2)));
    }

    // A rank dies with what started it: when rank 0's process ends, the kernel kills the rank.
    void aProgramThatDiesWithItsStarterDoesSo()
    {
        ProgramStart start;
        start.argv = {"/bin/sh", "-c", "echo started; exec sleep 60"};
        start.output = ProgramOutputs::Pipes;
        start.diesWithParent = true;
        // The starter is a child of this test, and the rank its child: orphaned, the rank becomes
        // this test's child (a subreaper's), so that how it ended can be read.
        prctl(PR_SET_CHILD_SUBREAPER, 1);
        int pids[2];
        QCOMPARE(pipe(pids), 0);
        const pid_t starter = fork();
        if (starter == 0) {
            // Once the rank has printed, it runs as the program, so it was told to die with this.
            const StartedProgram rank = startProgram(start);
            char line[8] = {};
            const bool started = read(rank.out, line, sizeof line) > 0;
            _exit(started && write(pids[1], &rank.pid, sizeof rank.pid) == sizeof rank.pid ? 0 : 1);
        }
        pid_t rank = -1;
        QCOMPARE(read(pids[0], &rank, sizeof rank), ssize_t(sizeof rank));
        close(pids[0]);
        close(pids[1]);
        QCOMPARE(waitForProgram(starter), 0);
        QVERIFY(rank > 0);
        QElapsedTimer waited;
        waited.start();
        const int status = reapProgram(rank).value_or(0);
        prctl(PR_SET_CHILD_SUBREAPER, 0);
        QVERIFY(WIFSIGNALED(status));
        QCOMPARE(WTERMSIG(status), SIGKILL);
        QVERIFY(waited.elapsed() < 30000); // well before its sleep would have ended

        // While its starter lives, it runs to its end and says how that went.
        start.output = ProgramOutputs::Inherited;
        start.argv = {"/bin/sh", "-c", "exit 5"};
        const StartedProgram five = startProgram(start);
        QCOMPARE(waitForProgram(five.pid), 5);
        start.argv = {"/nonexistent/optlog"};
        QCOMPARE(waitForProgram(startProgram(start).pid), kExitFailed); // it could not become that program
    }

    void aProgramThatCannotStartSaysWhy()
    {
        ProgramStart start;
        start.argv = {"/nonexistent/optlog", "run"};
        const StartedProgram missing = startProgram(start);
        QCOMPARE(missing.pid, pid_t(-1));
        QCOMPARE(missing.error, std::string(std::strerror(ENOENT)));
        const StartedProgram nothing = startProgram(ProgramStart{});
        QCOMPARE(nothing.pid, pid_t(-1));
        QCOMPARE(nothing.error, std::string("no program to start"));
        QCOMPARE(runProgram({"optlog-no-such-program"}).exitCode, 127);
    }
};

QTEST_GUILESS_MAIN(tst_Program)
#include "tst_program.moc"
