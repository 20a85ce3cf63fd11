// SPDX-License-Identifier: MIT
// The engine contract (core/contract): outcomes and exit codes.
#include "core/contract/outcome.h"

#include <QtTest>

using namespace optlog;

class tst_EngineContract : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void outcomesAndExitCodes_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<bool>("exitCodeTellsIt"); // the exit code alone gives the outcome back
        QTest::newRow("completed") << "completed" << 0 << true;
        QTest::newRow("failed") << "failed" << 1 << true;
        QTest::newRow("diverged") << "diverged" << 3 << true;
        QTest::newRow("cancelled") << "cancelled" << 4 << true;
        QTest::newRow("oom") << "oom" << 5 << true;
        QTest::newRow("crashed") << "crashed" << 1 << false; // a crashed engine never exits itself
    }
    void outcomesAndExitCodes()
    {
        QFETCH(QString, name);
        QFETCH(int, exitCode);
        QFETCH(bool, exitCodeTellsIt);
        const std::optional<Outcome> outcome = outcomeNamed(name.toStdString());
        QVERIFY(outcome);
        QCOMPARE(QString(outcomeName(*outcome)), name);
        QCOMPARE(int(exitCodeFor(*outcome)), exitCode);
        QCOMPARE(outcomeForExitCode(exitCode) == outcome, exitCodeTellsIt);
    }

    void exitCodesWithoutAnOutcome()
    {
        QVERIFY(!outcomeForExitCode(kExitBadInput)); // refused before a run existed
        QCOMPARE(outcomeForExitCode(127), std::optional<Outcome>(Outcome::Failed));
        QCOMPARE(outcomeForExitCode(-1), std::optional<Outcome>(Outcome::Failed));
        QVERIFY(!outcomeNamed("refused"));
        QVERIFY(!outcomeNamed(""));
        QCOMPARE(QString(outcomeName(std::optional<Outcome>())), QStringLiteral("running"));
        QCOMPARE(QString::fromStdString(exitCodesText()),
                 QStringLiteral("0 completed, 1 failed, 2 bad input (nothing written), 3 diverged, 4 cancelled, "
                                "5 out of memory budget"));
    }
};

QTEST_APPLESS_MAIN(tst_EngineContract)
#include "tst_enginecontract.moc"
