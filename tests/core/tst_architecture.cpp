// SPDX-License-Identifier: MIT
// docs/architecture.md's table of the engine's rooms is what their CMakeLists say: each room's
// "defines:" and "uses:" (the rule tests/floors enforces), in core/engine/CMakeLists.txt's order.
// With OPTLOG_WRITE_DOCS=1 the table is written into the page.
#include "tests/common/generateddocs.h"

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

QString roomsTable()
{
    const QString engine = QStringLiteral(OPTLOG_SOURCE_DIR "/core/engine/");
    QString table = QStringLiteral("| room | defines | uses |\n|---|---|---|\n");
    static const QRegularExpression room(QStringLiteral("add_subdirectory\\((\\w+)\\)"));
    static const QRegularExpression rule(QStringLiteral("defines: (.*) uses: ([^.]*)\\.?"));
    auto rooms = room.globalMatch(readAll(engine + QStringLiteral("CMakeLists.txt")));
    while (rooms.hasNext()) {
        const QString name = rooms.next().captured(1);
        const QRegularExpressionMatch said = rule.match(openingComment(readAll(engine + name + "/CMakeLists.txt")));
        if (!said.hasMatch())
            qFatal("core/engine/%s/CMakeLists.txt opens without \"defines: ... uses: ...\"", qPrintable(name));
        QString defines = said.captured(1).trimmed();
        if (defines.endsWith(QLatin1Char('.')))
            defines.chop(1);
        const QString uses = said.captured(2).trimmed();
        table += QStringLiteral("| %1 | %2 | %3 |\n")
                     .arg(name, defines, uses == QLatin1String("no other room") ? QStringLiteral("—") : uses);
    }
    return table;
}

} // namespace

class tst_Architecture : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void theRoomsTableIsWhatTheirCMakeListsSay()
    {
        optlog::testing::expectGeneratedSection(QStringLiteral(OPTLOG_SOURCE_DIR "/docs/architecture.md"),
                                                QStringLiteral("the engine rooms' CMakeLists"), roomsTable());
    }
};

QTEST_APPLESS_MAIN(tst_Architecture)
#include "tst_architecture.moc"
