// SPDX-License-Identifier: MIT
// The experiment designer: the CLI's own messages inline, sweeps, and what it queues.
#include "core/config/config.h"
#include "ui/designerview.h"

#include <QSignalSpy>
#include <QtTest>

using namespace optlog;

namespace {

// What `optlog run --preset default --set <assignment>` says about the same value.
QString cliMessage(const QStringList &assignments)
{
    std::vector<std::string> overrides;
    for (const QString &a : assignments)
        overrides.push_back(a.toStdString());
    try {
        loadRunConfig("default", "", overrides);
    } catch (const ConfigError &e) {
        return QString::fromUtf8(e.what());
    }
    return {};
}

} // namespace

class tst_Designer : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void presetFillsEveryField()
    {
        DesignerView designer;
        designer.setPreset(QStringLiteral("smoke"));
        QCOMPARE(designer.fieldText(QStringLiteral("model.width")), QStringLiteral("32"));
        QCOMPARE(designer.fieldText(QStringLiteral("precision.mode")), QStringLiteral("fp32"));
        QCOMPARE(designer.fieldText(QStringLiteral("model.tied_head")), QStringLiteral("true"));
        QVERIFY(designer.errors().isEmpty());
        QCOMPARE(designer.plannedRuns().size(), 1);
        QVERIFY(designer.plannedRuns().front().overrides.empty()); // nothing differs from the preset
    }

    void invalidFieldIsRefusedWithTheCliMessage_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("markedAt"); // the field the message belongs to
        QTest::addColumn<QStringList>("cli");  // the same mistake on the command line
        QTest::newRow("zero steps") << "train.steps"
                                    << "0"
                                    << "train.steps" << QStringList{"train.steps=0"};
        QTest::newRow("not a number") << "train.learning_rate"
                                      << "fast"
                                      << "train.learning_rate" << QStringList{"train.learning_rate=\"fast\""};
        QTest::newRow("fractional microbatch") << "train.microbatch"
                                               << "2.5"
                                               << "train.microbatch" << QStringList{"train.microbatch=2.5"};
        QTest::newRow("dropout of one") << "model.dropout"
                                        << "1"
                                        << "model.dropout" << QStringList{"model.dropout=1"};
        QTest::newRow("heads do not divide width") << "model.heads"
                                                   << "3"
                                                   << "model.width" << QStringList{"model.heads=3"};
        QTest::newRow("bad budget") << "memory.budget"
                                    << "lots"
                                    << "memory.budget" << QStringList{"memory.budget=\"lots\""};
        QTest::newRow("fp16 on the cpu") << "precision.mode"
                                         << "master-fp16"
                                         << "precision.mode" << QStringList{"precision.mode=\"master-fp16\""};
    }

    void invalidFieldIsRefusedWithTheCliMessage()
    {
        QFETCH(QString, path);
        QFETCH(QString, text);
        QFETCH(QString, markedAt);
        QFETCH(QStringList, cli);
        DesignerView designer;
        QSignalSpy requested(&designer, &DesignerView::runsRequested);
        QVERIFY(designer.setFieldText(path, text));
        designer.revalidate();
        const QString expected = cliMessage(cli);
        QVERIFY2(!expected.isEmpty(), "the CLI refuses it too");
        QCOMPARE(designer.fieldError(markedAt), expected);
        QCOMPARE(designer.errors(), expected);
        QVERIFY(designer.plannedRuns().isEmpty()); // nothing can be queued
    }

    void everyBadFieldIsMarkedAtOnce()
    {
        DesignerView designer;
        designer.setFieldText(QStringLiteral("train.steps"), QStringLiteral("0"));
        designer.setFieldText(QStringLiteral("train.microbatch"), QStringLiteral("-1"));
        designer.revalidate();
        QVERIFY(!designer.fieldError(QStringLiteral("train.steps")).isEmpty());
        QVERIFY(!designer.fieldError(QStringLiteral("train.microbatch")).isEmpty());
        QCOMPARE(designer.errors().count(QLatin1Char('\n')), 1);
        // Fixing both clears both.
        designer.setFieldText(QStringLiteral("train.steps"), QStringLiteral("100"));
        designer.setFieldText(QStringLiteral("train.microbatch"), QStringLiteral("4"));
        designer.revalidate();
        QVERIFY(designer.errors().isEmpty());
        QVERIFY(designer.fieldError(QStringLiteral("train.steps")).isEmpty());
    }

    void changedFieldsBecomeOverrides()
    {
        DesignerView designer;
        designer.setRunName(QStringLiteral("small batch"));
        designer.setFieldText(QStringLiteral("train.microbatch"), QStringLiteral("4"));
        designer.setFieldText(QStringLiteral("train.accumulation"), QStringLiteral("2"));
        designer.setFieldText(QStringLiteral("precision.mode"), QStringLiteral("autocast-bf16"));
        designer.revalidate();
        const QList<PlannedRun> runs = designer.plannedRuns();
        QCOMPARE(runs.size(), 1);
        QCOMPARE(runs[0].name, std::string("small batch"));
        QCOMPARE(runs[0].preset, std::string("default"));
        const std::vector<std::string> expected = {"train.microbatch=4", "train.accumulation=2",
                                                   "precision.mode=\"autocast-bf16\""};
        QCOMPARE(runs[0].overrides, expected);
        const RunConfig config = runs[0].config();
        QCOMPARE(config.tokensPerStep(), int64_t(4 * 2 * 128));
        QCOMPARE(config.precision.mode, std::string("autocast-bf16"));
    }

    // The ranks are fields like any other; the prediction is per rank and the batch says so.
    void ranksAndZeroAreFieldsAndTheBatchSaysSo()
    {
        DesignerView designer;
        designer.setRunName(QStringLiteral("two ranks"));
        QVERIFY(designer.setFieldText(QStringLiteral("distributed.ranks"), QStringLiteral("2")));
        QVERIFY(designer.setFieldText(QStringLiteral("distributed.zero_stage"), QStringLiteral("1")));
        designer.revalidate();
        QVERIFY(designer.errors().isEmpty());
        const QList<PlannedRun> runs = designer.plannedRuns();
        QCOMPARE(runs.size(), 1);
        const std::vector<std::string> expected = {"distributed.ranks=2", "distributed.zero_stage=1"};
        QCOMPARE(runs[0].overrides, expected);
        QCOMPARE(runs[0].config().tokensPerStep(), int64_t(2 * 8 * 128));
        QVERIFY2(designer.predictionSummary().contains(
                     QStringLiteral("2 ranks x microbatch 8 x accumulation 1 = 16 sequences per step")),
                 qPrintable(designer.predictionSummary()));
        QVERIFY(designer.predictionSummary().contains(QStringLiteral("per rank")));
        // ZeRO without ranks is refused with the CLI's message.
        QVERIFY(designer.setFieldText(QStringLiteral("distributed.ranks"), QStringLiteral("1")));
        designer.revalidate();
        QVERIFY(designer.errors().contains(QStringLiteral("shards over ranks")));
    }

    void sweepExpandsIntoEveryCombination()
    {
        DesignerView designer;
        designer.setPreset(QStringLiteral("smoke"));
        designer.setRunName(QStringLiteral("grid"));
        designer.setSweepAxis(0, QStringLiteral("train.microbatch"), QStringLiteral("2, 4,8"));
        designer.setSweepAxis(1, QStringLiteral("precision.mode"), QStringLiteral("fp32, autocast-bf16"));
        designer.revalidate();
        const QList<PlannedRun> runs = designer.plannedRuns();
        QCOMPARE(runs.size(), 6);
        QStringList names;
        for (const auto &run : runs)
            names << QString::fromStdString(run.name);
        QCOMPARE(names, (QStringList{"grid microbatch=2 mode=fp32", "grid microbatch=2 mode=autocast-bf16",
                                     "grid microbatch=4 mode=fp32", "grid microbatch=4 mode=autocast-bf16",
                                     "grid microbatch=8 mode=fp32", "grid microbatch=8 mode=autocast-bf16"}));
        const RunConfig last = runs.back().config();
        QCOMPARE(last.train.microbatch, int64_t(8));
        QCOMPARE(last.precision.mode, std::string("autocast-bf16"));
        QCOMPARE(last.model.width, int64_t(32)); // the preset underneath is kept

        QSignalSpy requested(&designer, &DesignerView::runsRequested);
        designer.show();
        QVERIFY(QTest::qWaitForWindowActive(&designer));
        QTest::keyClick(designer.windowHandle(), Qt::Key_Return, Qt::ControlModifier); // the add button's shortcut
        QCOMPARE(requested.count(), 1);
        QCOMPARE(requested.first().first().value<QList<PlannedRun>>().size(), 6);
    }

    void aBadSweepValueNamesItsRun()
    {
        DesignerView designer;
        designer.setRunName(QStringLiteral("grid"));
        designer.setSweepAxis(0, QStringLiteral("train.microbatch"), QStringLiteral("4, 0"));
        designer.revalidate();
        QVERIFY(designer.plannedRuns().isEmpty());
        QVERIFY2(designer.errors().startsWith(
                     QStringLiteral("sweep run 'grid microbatch=0': config: train.microbatch = 0")),
                 qPrintable(designer.errors()));
    }

    void seedsRepeatEachRunAsOneGroup()
    {
        DesignerView designer;
        designer.setRunName(QStringLiteral("bf16"));
        designer.setFieldText(QStringLiteral("train.seed"), QStringLiteral("7"));
        designer.setSweepAxis(0, QStringLiteral("train.microbatch"), QStringLiteral("4, 8"));
        designer.setRepeats(3);
        designer.revalidate();
        const QList<PlannedRun> runs = designer.plannedRuns();
        QCOMPARE(runs.size(), 6);
        QCOMPARE(QString::fromStdString(runs[0].name), QStringLiteral("bf16 microbatch=4 seed 7"));
        QCOMPARE(QString::fromStdString(runs[2].name), QStringLiteral("bf16 microbatch=4 seed 9"));
        const RunConfig third = runs[2].config();
        QCOMPARE(third.train.seed, int64_t(9));
        QCOMPARE(third.group, std::string("bf16 microbatch=4"));
        QCOMPARE(third.train.microbatch, int64_t(4));
        QCOMPARE(runs[3].config().group, std::string("bf16 microbatch=8"));
    }
};

QTEST_MAIN(tst_Designer)
#include "tst_designer.moc"
