// SPDX-License-Identifier: MIT
// docs/architecture.md's table of the engine's rooms is what their CMakeLists say: each room's
// "defines:" and "uses:" (the rule tests/floors enforces), in core/engine/CMakeLists.txt's order,
// and each "uses:" is what the room's files include; the loop the page walks through is the one
// in the code. With OPTLOG_WRITE_DOCS=1 the table is written into the page.
#include "tests/common/generateddocs.h"
#include "tests/common/testpaths.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QRegularExpression>
#include <QSet>
#include <QtTest>

namespace {

QString readAll(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(path));
    return QString::fromUtf8(file.readAll());
}

// The comment that opens a CMakeLists, its lines joined, without the licence line.
QString openingComment(const QString &text)
{
    QStringList lines;
    for (const QString &line : text.split(QLatin1Char('\n'))) {
        if (!line.startsWith(QLatin1Char('#')))
            break;
        if (!line.contains(QLatin1String("SPDX-License-Identifier")))
            lines << line.mid(1).trimmed();
    }
    return lines.join(QLatin1Char(' '));
}

struct Room
{
    QString name;
    QString defines; // empty: its CMakeLists does not open with "defines: ... uses: ..."
    QString uses;
};

// The engine's rooms in core/engine/CMakeLists.txt's order, as their CMakeLists describe them.
QList<Room> rooms()
{
    const QString engine = optlog::testing::sourcePath(QStringLiteral("core/engine/"));
    static const QRegularExpression room(QStringLiteral("add_subdirectory\\((\\w+)\\)"));
    static const QRegularExpression rule(QStringLiteral("defines: (.*) uses: ([^.]*)\\.?"));
    QList<Room> out;
    auto names = room.globalMatch(readAll(engine + QStringLiteral("CMakeLists.txt")));
    while (names.hasNext()) {
        Room r{names.next().captured(1), {}, {}};
        const QRegularExpressionMatch said = rule.match(openingComment(readAll(engine + r.name + "/CMakeLists.txt")));
        if (said.hasMatch()) {
            r.defines = said.captured(1).trimmed();
            if (r.defines.endsWith(QLatin1Char('.')))
                r.defines.chop(1);
            r.uses = said.captured(2).trimmed();
        }
        out << r;
    }
    return out;
}

// The rooms a "uses:" line names: "compat, kernels (LibTorch only)" -> compat, kernels.
QSet<QString> roomsNamed(const QString &uses)
{
    QSet<QString> named;
    if (uses == QLatin1String("no other room"))
        return named;
    for (QString name : uses.split(QLatin1Char(','))) {
        name = name.trimmed();
        named << name.left(name.indexOf(QLatin1Char(' ')) < 0 ? name.size() : name.indexOf(QLatin1Char(' ')));
    }
    return named;
}

// The other rooms a room's files include.
QSet<QString> roomsIncluded(const QString &room)
{
    static const QRegularExpression include(QStringLiteral("#include \"core/engine/(\\w+)/"));
    QSet<QString> included;
    const QDir folder(optlog::testing::sourcePath(QStringLiteral("core/engine/") + room));
    for (const QString &file : folder.entryList({QStringLiteral("*.cpp"), QStringLiteral("*.h")}, QDir::Files)) {
        auto found = include.globalMatch(readAll(folder.filePath(file)));
        while (found.hasNext())
            included << found.next().captured(1);
    }
    included.remove(room);
    return included;
}

// Every C++ file under core, app and ui, relative to the source tree.
QStringList sourceFiles()
{
    QStringList files;
    const QDir root(optlog::testing::sourcePath(QString()));
    for (const char *top : {"core", "app", "ui"}) {
        QDirIterator it(root.filePath(QString::fromLatin1(top)), {QStringLiteral("*.cpp"), QStringLiteral("*.h")},
                        QDir::Files, QDirIterator::Subdirectories);
        while (it.hasNext())
            files << root.relativeFilePath(it.next());
    }
    files.sort();
    return files;
}

qsizetype lineCount(const QString &text)
{
    return text.count(QLatin1Char('\n'));
}

// The lines of `files` (relative paths) that match `pattern`, each "path:line: text".
QStringList matchingLines(const QStringList &files, const QRegularExpression &pattern)
{
    QStringList found;
    for (const QString &file : files) {
        const QStringList lines = readAll(optlog::testing::sourcePath(file)).split(QLatin1Char('\n'));
        for (qsizetype i = 0; i < lines.size(); ++i)
            if (pattern.match(lines[i]).hasMatch())
                found << QStringLiteral("%1:%2: %3").arg(file).arg(i + 1).arg(lines[i].trimmed());
    }
    return found;
}

// A function's body as the check below measures it: from the first line of its signature to its
// closing brace. A body is a "{" alone on its line (clang-format's braces for functions) whose
// signature begins at the brace's indentation; a class, struct, enum or namespace is not one.
struct FunctionBody
{
    QString file;
    qsizetype line = 0; // of the signature, from 1
    QString name;       // "estimateMemory", "MainWindow::MainWindow"
    qsizetype lines = 0;
};

QList<FunctionBody> functionBodies(const QString &file)
{
    static const QRegularExpression brace(QStringLiteral("^(\\s*)\\{\\s*$"));
    static const QRegularExpression notAFunction(QStringLiteral("^(class|struct|enum|union|namespace|extern)\\b"));
    static const QRegularExpression name(QStringLiteral("([\\w:~]+)\\s*\\("));
    const QStringList lines = readAll(optlog::testing::sourcePath(file)).split(QLatin1Char('\n'));
    QList<FunctionBody> bodies;
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const QRegularExpressionMatch open = brace.match(lines[i]);
        if (!open.hasMatch())
            continue;
        const QString indent = open.captured(1);
        qsizetype previous = i - 1;
        while (previous > 0 && lines[previous].trimmed().isEmpty())
            --previous;
        qsizetype start = previous; // a signature's later lines are indented further, or its initializers
        while (start > 0
               && (lines[start].startsWith(indent + QLatin1Char(' '))
                   || lines[start].startsWith(indent + QLatin1Char(':'))))
            --start;
        const QString signature = lines[start].trimmed();
        const QString before = lines[previous].trimmed();
        if (notAFunction.match(signature).hasMatch() || before.endsWith(QLatin1Char('='))
            || before.endsWith(QLatin1Char(',')))
            continue;
        qsizetype end = i + 1;
        while (end < lines.size() && !lines[end].startsWith(indent + QLatin1Char('}')))
            ++end;
        bodies << FunctionBody{file, start + 1, name.match(signature).captured(1), end - start + 1};
        i = end;
    }
    return bodies;
}

QString roomsTable(const QList<Room> &rooms)
{
    QString table = QStringLiteral("| room | defines | uses |\n|---|---|---|\n");
    for (const Room &r : rooms)
        table += QStringLiteral("| %1 | %2 | %3 |\n")
                     .arg(r.name, r.defines, r.uses == QLatin1String("no other room") ? QStringLiteral("—") : r.uses);
    return table;
}

} // namespace

class tst_Architecture : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void theRoomsTableIsWhatTheirCMakeListsSay()
    {
        const QList<Room> found = rooms();
        // Every folder of core/engine is a room the CMakeLists adds, and says what it defines and uses.
        const QStringList folders = QDir(optlog::testing::sourcePath(QStringLiteral("core/engine")))
                                        .entryList(QDir::Dirs | QDir::NoDotAndDotDot);
        QCOMPARE(found.size(), folders.size());
        for (const Room &r : found) {
            QVERIFY2(folders.contains(r.name), qPrintable(r.name));
            QVERIFY2(!r.defines.isEmpty() && !r.uses.isEmpty(),
                     qPrintable("core/engine/" + r.name + "/CMakeLists.txt opens without \"defines: ... uses: ...\""));
        }
        optlog::testing::expectGeneratedSection(optlog::testing::sourcePath(QStringLiteral("docs/architecture.md")),
                                                QStringLiteral("the engine rooms' CMakeLists"), roomsTable(found));
    }

    // Both ways: a room includes only the rooms its "uses:" names, and uses each it names.
    void eachRoomUsesWhatItIncludes()
    {
        for (const Room &r : rooms()) {
            const QSet<QString> named = roomsNamed(r.uses), included = roomsIncluded(r.name);
            for (const QString &room : included - named)
                QFAIL(qPrintable("core/engine/" + r.name + " includes the room " + room
                                 + ", which its CMakeLists' \"uses:\" does not name"));
            for (const QString &room : named - included)
                QFAIL(qPrintable("core/engine/" + r.name + "/CMakeLists.txt says it uses " + room
                                 + ", which none of its files includes"));
        }
    }

    // The function docs/architecture.md's "The loop" walks through is the trainer's loop of steps.
    void theLoopIsNamedAsInTheCode()
    {
        const QString page = readAll(optlog::testing::sourcePath(QStringLiteral("docs/architecture.md")));
        const qsizetype section = page.indexOf(QLatin1String("### The loop"));
        QVERIFY2(section >= 0, "docs/architecture.md has no section \"The loop\"");
        const QRegularExpressionMatch named = QRegularExpression(QStringLiteral("`Trainer::(\\w+)`"))
                                                  .match(page, section);
        QVERIFY2(named.hasMatch(), "\"The loop\" names no Trainer:: function");
        const QString code = readAll(optlog::testing::sourcePath(QStringLiteral("core/engine/train/trainer.cpp")));
        const QRegularExpressionMatch definition
            = QRegularExpression(QStringLiteral("\\nTrainingOutcome Trainer::%1\\((.*?)\\n}\\n").arg(named.captured(1)),
                                 QRegularExpression::DotMatchesEverythingOption)
                  .match(code);
        QVERIFY2(definition.hasMatch(), qPrintable("docs/architecture.md's loop, Trainer::" + named.captured(1)
                                                   + ", is not a function of trainer.cpp"));
        QVERIFY2(definition.captured(1).contains(QLatin1String("for (int64_t step = m_firstStep; step < train.steps;")),
                 qPrintable("Trainer::" + named.captured(1) + " is not the loop of steps"));
    }

    // A file a new owner reads in one sitting: no source file, with the header of its name, is
    // over 600 lines.
    void noSourceFileIsOver600LinesWithItsHeader()
    {
        QStringList long_;
        for (const QString &file : sourceFiles()) {
            qsizetype lines = lineCount(readAll(optlog::testing::sourcePath(file)));
            if (file.endsWith(QLatin1String(".cpp"))) {
                const QString header = file.chopped(4) + QStringLiteral(".h");
                if (QFile::exists(optlog::testing::sourcePath(header)))
                    lines += lineCount(readAll(optlog::testing::sourcePath(header)));
            }
            if (lines > 600)
                long_ << QStringLiteral("%1: %2 lines").arg(file).arg(lines);
        }
        QVERIFY2(long_.isEmpty(), qPrintable(long_.join(QLatin1Char('\n'))));
    }

    // What differs between LibTorch versions is asked in the compatibility room alone, and app/ is
    // wiring: it calls the engine, never LibTorch itself.
    void versionChecksLiveInTheCompatibilityRoomAndAppIsWiring()
    {
        QStringList outside;
        for (const QString &file : sourceFiles())
            if (!file.startsWith(QLatin1String("core/engine/compat/")))
                outside << file;
        const QStringList checks = matchingLines(outside, QRegularExpression(QStringLiteral(
                                                              "OPTLOG_TORCH_AT_LEAST|TORCH_VERSION_M|at::autocast::")));
        QVERIFY2(checks.isEmpty(), qPrintable(checks.join(QLatin1Char('\n'))));
        QStringList app;
        for (const QString &file : sourceFiles())
            if (file.startsWith(QLatin1String("app/")))
                app << file;
        const QStringList libtorch = matchingLines(app, QRegularExpression(QStringLiteral(
                                                            "#include <(ATen|torch|c10)/|\\b(at|torch|c10)::")));
        QVERIFY2(libtorch.isEmpty(), qPrintable(libtorch.join(QLatin1Char('\n'))));
    }

    // An enum becomes a word through one mechanism, a table of Named rows (core/contract/rowlookup.h),
    // read both ways: no switch whose every case returns a word, and no other table of names.
    // No function in core, app or ui is longer than a screen (80 lines), but for the ones named
    // here, each with the reason it is one piece.
    void noFunctionIsLongerThanAScreen()
    {
        constexpr qsizetype kScreen = 80;
        struct Exception
        {
            const char *file;
            const char *function;
            const char *reason;
        };
        static constexpr Exception exceptions[] = {
            {"core/config/configfields.cpp", "configFields",
             "the table of every config field, a row each: one list to read, not steps"},
            {"core/contract/environmentvariables.cpp", "environmentVariables",
             "the table of every environment variable optlog reads, a row each (docs/environment.md is made from it)"},
        };
        QStringList tooLong, stale;
        QSet<QString> excused;
        for (const Exception &e : exceptions)
            excused << QString::fromLatin1(e.file) + QLatin1Char(':') + QString::fromLatin1(e.function);
        QSet<QString> seen;
        for (const QString &file : sourceFiles())
            for (const FunctionBody &body : functionBodies(file)) {
                const QString key = file + QLatin1Char(':') + body.name;
                if (body.lines <= kScreen)
                    continue;
                seen << key;
                if (!excused.contains(key))
                    tooLong << QStringLiteral("%1:%2 %3 (%4 lines)")
                                   .arg(file)
                                   .arg(body.line)
                                   .arg(body.name)
                                   .arg(body.lines);
            }
        for (const QString &key : excused)
            if (!seen.contains(key))
                stale << key;
        QVERIFY2(tooLong.isEmpty(), qPrintable("functions over 80 lines: " + tooLong.join(QStringLiteral(", "))));
        // An exception that no longer needs its place leaves the list.
        QVERIFY2(stale.isEmpty(), qPrintable("exceptions no longer over 80 lines: " + stale.join(QStringLiteral(", "))));
    }

    // What this machine asks a host and what the host answers is written in one module that both
    // sides use (core/remote/hostprotocol): no other source spells its option words or answer keys.
    void theHostProtocolIsWrittenOnce()
    {
        static const QRegularExpression words(QStringLiteral(
            "\"(--metrics-from|--validation-from|--events-from|--config-bytes|--study-seed|event_format|start_keys|"
            "free_bytes)\"|optlog follow: "));
        QStringList others;
        for (const QString &line : matchingLines(sourceFiles(), words))
            if (!line.startsWith(QLatin1String("core/remote/hostprotocol.")))
                others << line;
        QVERIFY2(others.isEmpty(), qPrintable(others.join(QLatin1Char('\n'))));
    }

    void enumsAreNamedByTablesNotSwitches()
    {
        static const QRegularExpression word(
            QStringLiteral("^\\s*case [\\w:]+:\\s*return (QStringLiteral\\()?\"[^\"]*\"\\)?;"));
        static const QRegularExpression anyCase(QStringLiteral("^\\s*(case [\\w:]+|default):"));
        QStringList naming;
        for (const QString &file : sourceFiles()) {
            const QString text = readAll(optlog::testing::sourcePath(file));
            for (qsizetype at = text.indexOf(QLatin1String("switch (")); at >= 0;
                 at = text.indexOf(QLatin1String("switch ("), at + 1)) {
                // The switch's block, to its closing brace.
                qsizetype open = text.indexOf(QLatin1Char('{'), at), depth = 0, end = open;
                for (; end < text.size(); ++end) {
                    depth += text[end] == QLatin1Char('{') ? 1 : text[end] == QLatin1Char('}') ? -1 : 0;
                    if (depth == 0)
                        break;
                }
                int cases = 0, words = 0;
                for (const QString &line : text.mid(open, end - open).split(QLatin1Char('\n'))) {
                    const bool isCase = anyCase.match(line).hasMatch();
                    cases += isCase && !line.contains(QLatin1String("break;"))
                             && line.contains(QLatin1String("return"));
                    words += word.match(line).hasMatch();
                }
                if (words >= 2 && words == cases)
                    naming << QStringLiteral("%1:%2").arg(file).arg(lineCount(text.left(at)) + 1);
            }
        }
        QVERIFY2(naming.isEmpty(), qPrintable("switches that name an enum: " + naming.join(QStringLiteral(", "))));
        const QStringList others = matchingLines(sourceFiles(), QRegularExpression(QStringLiteral("choiceNames")));
        QVERIFY2(others.isEmpty(), qPrintable(others.join(QLatin1Char('\n'))));
    }
};

QTEST_APPLESS_MAIN(tst_Architecture)
#include "tst_architecture.moc"
