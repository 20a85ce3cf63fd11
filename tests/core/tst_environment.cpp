// SPDX-License-Identifier: MIT
// Every environment variable optlog reads, in one table (core/contract/environmentvariables.h), and
// those only the tests read in one of their own: docs/environment.md shows them as the code writes
// them, every name the sources read is in one, and every name in them is read where it says.
#include "core/contract/environmentvariables.h"
#include "tests/common/generateddocs.h"
#include "tests/common/testpaths.h"

#include <QDirIterator>
#include <QFile>
#include <QRegularExpression>
#include <QSet>
#include <QtTest>
#include <initializer_list>
#include <utility>

using namespace optlog;

namespace {

// The names the sources in `folders` read, with one file that reads each. In C++ and Python: a
// quoted name of a library's or optlog's variables (their prefixes; glog's flags are lower case),
// or one of the plain names below; in the scripts: a variable read with a default
// ("${NAME:-...}"), which is how they take settings.
QMap<QString, QString> namesReadIn(std::initializer_list<const char *> folders)
{
    static const QRegularExpression quoted(
        QStringLiteral("\"((?:OPTLOG|OMP|OPENBLAS|XDG|SLURM|MASTER|CUBLAS|CUBLASLT|TORCH|CUDA|GLOO|DNNL|ONEDNN|QT|"
                       "WAYLAND|NCCL)_[A-Z0-9_]+|GLOG_[a-z_]+|DISPLAY|HOME|PATH|OPTLOG|RANK|WORLD_SIZE)\""));
    static const QRegularExpression withDefault(QStringLiteral("\\$\\{([A-Z][A-Z0-9_]*):?[-=+?]"));
    QMap<QString, QString> found;
    for (const char *folder : folders) {
        QDirIterator files(optlog::testing::sourcePath(folder), QDir::Files, QDirIterator::Subdirectories);
        while (files.hasNext()) {
            const QString path = files.next();
            if (path.endsWith(QLatin1String("core/contract/environmentvariables.cpp"))
                || path.endsWith(QLatin1String("tests/core/tst_environment.cpp")))
                continue; // the tables themselves, and this test's own words about them
            QFile file(path);
            if (!file.open(QIODevice::ReadOnly))
                continue;
            const QString text = QString::fromUtf8(file.readAll());
            const bool code = path.endsWith(QLatin1String(".cpp")) || path.endsWith(QLatin1String(".h"))
                              || path.endsWith(QLatin1String(".py"));
            const bool script = path.endsWith(QLatin1String(".sh")) || text.startsWith(QLatin1String("#!"));
            if (!code && !script)
                continue;
            auto matches = (code ? quoted : withDefault).globalMatch(text);
            while (matches.hasNext()) {
                const QString name = matches.next().captured(1);
                if (!found.contains(name))
                    found.insert(name, path.mid(optlog::testing::sourcePath().size()));
            }
        }
    }
    return found;
}

} // namespace

class tst_Environment : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void theDocsShowTheTable()
    {
        testing::expectGeneratedSection(optlog::testing::sourcePath(QStringLiteral("docs/environment.md")),
                                        QStringLiteral("environmentVariablesMarkdown()"),
                                        QString::fromStdString(environmentVariablesMarkdown()));
    }

    void everyNameReadIsInTheTableAndEveryNameInItIsRead()
    {
        QSet<QString> listed, listedForTests;
        for (const auto &[table, names] :
             {std::pair{&environmentVariables(), &listed}, std::pair{&testEnvironmentVariables(), &listedForTests}})
            for (const EnvironmentVariable &v : *table) {
                QVERIFY2(!listed.contains(QString::fromUtf8(v.name))
                             && !listedForTests.contains(QString::fromUtf8(v.name)),
                         v.name); // once each, in one table
                names->insert(QString::fromUtf8(v.name));
                QVERIFY2(*v.readBy && *v.meaning, v.name);
            }
        const QMap<QString, QString> read = namesReadIn({"app", "core", "ui", "packaging", "tools"});
        for (auto it = read.begin(); it != read.end(); ++it)
            QVERIFY2(listed.contains(it.key()),
                     qPrintable(it.value() + " reads " + it.key() + ", which environmentVariables() does not list"));
        for (const QString &name : listed)
            QVERIFY2(read.contains(name), qPrintable(name + " is listed, and no source reads it any more"));
        // The tests' own: in one table or the other, and the tests' table holds only names no part
        // of optlog reads.
        const QMap<QString, QString> readByTests = namesReadIn({"tests"});
        for (auto it = readByTests.begin(); it != readByTests.end(); ++it)
            QVERIFY2(listed.contains(it.key()) || listedForTests.contains(it.key()),
                     qPrintable(it.value() + " reads " + it.key() + ", which neither table lists"));
        for (const QString &name : listedForTests)
            QVERIFY2(readByTests.contains(name) && !read.contains(name),
                     qPrintable(name + " is listed as the tests' own: "
                                + (read.contains(name) ? "optlog reads it (" + read.value(name) + ")"
                                                       : QStringLiteral("no test reads it any more"))));
    }
};

QTEST_APPLESS_MAIN(tst_Environment)
#include "tst_environment.moc"
