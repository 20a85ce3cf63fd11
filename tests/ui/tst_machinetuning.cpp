// SPDX-License-Identifier: MIT
// The workbench's view of this machine's tuning through the real engine binary: `optlog tune
// --status` on an empty cache, a real (quick, small) tuning, and the main window's offer to tune.
#include "tests/common/testpaths.h"
#include "ui/machinetuning.h"
#include "ui/mainwindow.h"
#include "ui/runqueue.h"

#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

using namespace optlog;

class tst_MachineTuning : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_cache.isValid());
        qputenv("XDG_CACHE_HOME", m_cache.path().toUtf8()); // and so the engine's, started from here
        QStandardPaths::setTestModeEnabled(true);           // the main window's QSettings too
    }

    void saysUntunedThenWhatATuningMeasured()
    {
        MachineTuning tuning(optlog::testing::optlogBinary());
        QSignalSpy changed(&tuning, &MachineTuning::changed);
        tuning.refresh();
        QVERIFY(changed.wait(60000));
        QCOMPARE(tuning.families().size(), 2);
        QVERIFY2(tuning.summary().contains(QLatin1String("fp32: not tuned on this machine")),
                 qPrintable(tuning.summary()));
        QVERIFY(!tuning.fullyTuned());

        QVERIFY(tuning.tune({"--quick", "--preset", "smoke", "--modes", "fp32"}));
        QVERIFY(tuning.isTuning());
        QVERIFY2(tuning.summary().startsWith(QLatin1String("Tuning this machine")), qPrintable(tuning.summary()));
        QVERIFY(!tuning.tune()); // one tuning at a time
        QTRY_VERIFY_WITH_TIMEOUT(!tuning.isTuning()
                                     && tuning.families().join(u'\n').contains(
                                         QLatin1String("fp32: tuned by a quick probe")),
                                 300000);
        // Probed, and BF16 untouched: still worth a full tuning.
        QVERIFY2(tuning.summary().contains(QLatin1String("bf16: not tuned")), qPrintable(tuning.summary()));
        QVERIFY(!tuning.fullyTuned());

        // A tuning the engine refuses says why, in one line.
        QVERIFY(tuning.tune({"--modes", "fp8"}));
        QTRY_VERIFY_WITH_TIMEOUT(!tuning.isTuning() && tuning.summary().contains(QLatin1String("tuning failed: ")),
                                 60000);
        QVERIFY2(tuning.summary().contains(QLatin1String("fp8")), qPrintable(tuning.summary()));
    }

    void theWindowShowsItAndOffersToTune()
    {
        MainWindow window(optlog::testing::optlogBinary());
        window.show();
        auto *label = window.findChild<QLabel *>(QStringLiteral("tuningStatus"));
        auto *button = window.findChild<QPushButton *>(QStringLiteral("tuneButton"));
        QVERIFY(label && button);
        QTRY_VERIFY_WITH_TIMEOUT(label->text().contains(QLatin1String("fp32: tuned by a quick probe")), 60000);
        QVERIFY(button->isVisible() && button->isEnabled());
    }

    // The queue's first run on an untuned machine: the launcher's probe is said in the status bar
    // while the Monitor waits, and the machine's status follows it.
    void aQueuedRunOnAnUntunedMachineSaysItProbes()
    {
        QTemporaryDir cache, studies;
        const QByteArray previousCache = qgetenv("XDG_CACHE_HOME"), previousProbe = qgetenv("OPTLOG_PROBE_UNTUNED");
        qputenv("XDG_CACHE_HOME", cache.path().toUtf8());
        qunsetenv("OPTLOG_PROBE_UNTUNED"); // as a user's machine has it
        {
            MainWindow window(optlog::testing::optlogBinary());
            QVERIFY(window.openStudy(studies.filePath(QStringLiteral("probe.sqlite"))));
            QSignalSpy said(window.queue(), &RunQueue::launcherSaid);
            QSignalSpy finished(window.queue(), &RunQueue::runFinished);
            PlannedRun run;
            run.name = "first";
            run.preset = "smoke";
            run.overrides = {"data.corpus=generated", "train.steps=5"};
            window.queue()->enqueue(run);
            window.queue()->start();
            QTRY_VERIFY_WITH_TIMEOUT(!said.isEmpty(), 60000);
            QVERIFY2(said.first().first().toString().contains(
                         QLatin1String("probing threads, wait policy and product path first")),
                     qPrintable(said.first().first().toString()));
            QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 300000);
            QCOMPARE(finished.first().at(1).toString(), QStringLiteral("completed"));
            auto *label = window.findChild<QLabel *>(QStringLiteral("tuningStatus"));
            QTRY_VERIFY_WITH_TIMEOUT(label->text().contains(QLatin1String("fp32: tuned by a quick probe")), 60000);
        }
        qputenv("XDG_CACHE_HOME", previousCache);
        qputenv("OPTLOG_PROBE_UNTUNED", previousProbe);
    }

private:
    QTemporaryDir m_cache;
};

QTEST_MAIN(tst_MachineTuning)
#include "tst_machinetuning.moc"
