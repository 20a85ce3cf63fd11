// SPDX-License-Identifier: MIT
#pragma once
// A docs page that shows a table the code generates keeps it between two markers:
//   <!-- generated from NAME: edit the code, not this table -->  ...  <!-- end of what NAME generated -->
// A test compares the two. With OPTLOG_WRITE_DOCS=1 it writes the code's table into the page instead.

#include <QFile>
#include <QString>
#include <QtTest>

namespace optlog::testing {

inline void expectGeneratedSection(const QString &pagePath, const QString &name, const QString &generated)
{
    const QString begin = QStringLiteral("<!-- generated from %1: edit the code, not this table -->\n").arg(name);
    const QString end = QStringLiteral("<!-- end of what %1 generated -->\n").arg(name);
    QFile page(pagePath);
    QVERIFY2(page.open(QIODevice::ReadOnly), qPrintable(pagePath));
    QString text = QString::fromUtf8(page.readAll());
    page.close();
    const qsizetype from = text.indexOf(begin);
    const qsizetype to = text.indexOf(end);
    QVERIFY2(from >= 0 && to > from, qPrintable(pagePath + QStringLiteral(" marks where ") + name + " goes"));
    const qsizetype start = from + begin.size();
    const QString shown = text.mid(start, to - start);
    if (qEnvironmentVariableIntValue("OPTLOG_WRITE_DOCS") == 1 && shown != generated) {
        text.replace(start, shown.size(), generated);
        QVERIFY(page.open(QIODevice::WriteOnly | QIODevice::Truncate));
        page.write(text.toUtf8());
        qInfo("wrote %s's table into %s", qPrintable(name), qPrintable(pagePath));
        return;
    }
    QCOMPARE(shown, generated);
}

} // namespace optlog::testing
