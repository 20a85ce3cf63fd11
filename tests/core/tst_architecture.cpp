// SPDX-License-Identifier: MIT
// docs/architecture.md's table of the engine's rooms is what their CMakeLists say: each room's
// "defines:" and "uses:" (the rule tests/floors enforces), in core/engine/CMakeLists.txt's order.
// With OPTLOG_WRITE_DOCS=1 the table is written into the page.
#include "tests/common/generateddocs.h"
#include "tests/common/testpaths.h"

#include <QDir>
#include <QFile>
#include <QRegularExpression>
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
};

QTEST_APPLESS_MAIN(tst_Architecture)
#include "tst_architecture.moc"
