// SPDX-License-Identifier: MIT
// The engine contract (core/contract): outcomes and exit codes, memory roles, CSV fields, medians
// and quantiles.
#include "core/contract/format.h"
#include "core/contract/memoryroles.h"
#include "core/contract/outcome.h"
#include "core/contract/quantiles.h"

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

    void memoryRolesInTheirOneOrder()
    {
        QStringList names;
        for (MemoryRole role : kMemoryRoles) {
            names << QString(memoryRoleName(role));
            QCOMPARE(memoryRoleNamed(memoryRoleName(role)), std::optional<MemoryRole>(role));
        }
        QCOMPARE(names.join(QLatin1Char(' ')),
                 QStringLiteral("parameters gradients master_weights optimizer_state communication_buffers "
                                "saved_activations temporaries "
                                "peak peak_reserved peak_rss"));
        // The parts of a peak lead, in the same order; the peaks are no part of themselves.
        for (size_t i = 0; i < std::size(kPeakParts); ++i) {
            QCOMPARE(kPeakParts[i], kMemoryRoles[i]);
            QVERIFY(isPeakPart(kPeakParts[i]));
        }
        QVERIFY(!isPeakPart(MemoryRole::Peak) && !isPeakPart(MemoryRole::PeakRss));
        QCOMPARE(QString(memoryRoleLabel(MemoryRole::SavedActivations)), QStringLiteral("saved activations"));
        QVERIFY(!memoryRoleNamed("activations"));
        QCOMPARE(memorySourceNamed("predicted"), std::optional<MemorySource>(MemorySource::Predicted));
        QCOMPARE(QString(memorySourceName(MemorySource::Measured)), QStringLiteral("measured"));
        QVERIFY(!memorySourceNamed("guessed"));
    }

    void csvFieldsAreQuotedAndNeverFormulas_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("field");
        QTest::newRow("plain") << "fp32 seed 1"
                               << "fp32 seed 1";
        QTest::newRow("comma") << "a,b"
                               << "\"a,b\"";
        QTest::newRow("quote") << "say \"hi\""
                               << "\"say \"\"hi\"\"\"";
        QTest::newRow("line break") << "two\nlines"
                                    << "\"two\nlines\"";
        QTest::newRow("formula") << "=HYPERLINK(\"x\")"
                                 << "\"'=HYPERLINK(\"\"x\"\")\"";
        QTest::newRow("plus") << "+1"
                              << "'+1";
        QTest::newRow("minus") << "-2+3"
                               << "'-2+3";
        QTest::newRow("at") << "@SUM(A1)"
                            << "'@SUM(A1)";
        QTest::newRow("tab") << "\tx"
                             << "'\tx";
        QTest::newRow("empty") << ""
                               << "";
    }

    void csvFieldsAreQuotedAndNeverFormulas()
    {
        QFETCH(QString, text);
        QFETCH(QString, field);
        QCOMPARE(QString::fromStdString(csvField(text.toStdString())), field);
    }

    void mediansAndQuantiles_data()
    {
        QTest::addColumn<QList<double>>("values");
        QTest::addColumn<double>("median");
        QTest::addColumn<double>("p10");
        QTest::newRow("none") << QList<double>{} << 0.0 << 0.0;
        QTest::newRow("one") << QList<double>{7} << 7.0 << 7.0;
        QTest::newRow("odd, unsorted") << QList<double>{5, 1, 3} << 3.0 << 1.4;
        QTest::newRow("even: the mean of the middle two") << QList<double>{4, 1, 3, 2} << 2.5 << 1.3;
        // An exact rank is its value, whatever lies above it.
        QTest::newRow("infinite above the middle") << QList<double>{1, 2, qInf()} << 2.0 << 1.2;
    }
    void mediansAndQuantiles()
    {
        QFETCH(QList<double>, values);
        QFETCH(double, median);
        QFETCH(double, p10);
        std::vector<double> sample(values.begin(), values.end());
        QCOMPARE(medianOf(sample), median);
        std::sort(sample.begin(), sample.end());
        QVERIFY(qAbs(quantileOfSorted(sample, 0.1) - p10) < 1e-12);
        QCOMPARE(quantileOfSorted(sample, 0.5), median);
    }
};

QTEST_APPLESS_MAIN(tst_EngineContract)
#include "tst_enginecontract.moc"
