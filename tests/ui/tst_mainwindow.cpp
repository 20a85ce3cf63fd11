// SPDX-License-Identifier: MIT
// The main window around a study: opening, refusing what is not a study, queueing a plan,
// empty states and restored window state.
#include "core/config/studyplan.h"
#include "core/store/store.h"
#include "tests/common/steadysteps.h"
#include "tests/common/testpaths.h"
#include "ui/compareview.h"
#include "ui/decisionsummary.h"
#include "ui/mainwindow.h"
#include "ui/runqueue.h"
#include "ui/runsview.h"
#include "ui/runtablemodel.h"
#include "ui/studywatcher.h"

#include <QDockWidget>
#include <QHeaderView>
#include <QMessageBox>
#include <QProcess>
#include <QPushButton>
#include <QSettings>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

using namespace optlog;

class tst_MainWindow : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
        QVERIFY(m_dir.isValid());
    }

    void aFileThatIsNotAStudyIsRefusedAndLeftAlone()
    {
        MainWindow window(optlog::testing::optlogBinary());
        const QString study = m_dir.filePath(QStringLiteral("good.sqlite"));
        QVERIFY(window.openStudy(study));
        const QString junk = m_dir.filePath(QStringLiteral("notes.txt"));
        QFile file(junk);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("my notes, not a study\n");
        file.close();

        QString message;
        QTimer::singleShot(0, this, [&message] {
            if (auto *box = qobject_cast<QMessageBox *>(QApplication::activeModalWidget())) {
                message = box->informativeText().isEmpty() ? box->text() : box->informativeText();
                box->accept();
            }
        });
        QVERIFY(!window.openStudy(junk));
        QVERIFY2(message.contains(QStringLiteral("Nothing in the file was changed")), qPrintable(message));
        QCOMPARE(window.studyPath(), QFileInfo(study).absoluteFilePath()); // the open study stays open
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(file.readAll(), QByteArray("my notes, not a study\n"));
    }

    void queuesOnlyWhatThePlanHasNotCompleted()
    {
        const QString study = m_dir.filePath(QStringLiteral("half.sqlite"));
        {
            // Completed with the plan's own config: done. (`optlog study` keeps the same runs.)
            const StudyPlan plan = loadStudyPlan("default");
            Store store(study.toStdString());
            const int64_t done = store.createRun("fp32", toToml(plan.runs.at(0).config()));
            store.finishRun(done, Outcome::Completed, 299, "");
            const int64_t failed = store.createRun("fp32-microbatch4-accum2", "");
            store.finishRun(failed, Outcome::Failed, 3, "boom");
        }
        MainWindow window(optlog::testing::optlogBinary());
        QVERIFY(window.openStudy(study));
        QCOMPARE(window.queuePlan(QStringLiteral("default")), 1); // the failed one runs again
        QCOMPARE(window.queue()->entries().front().run.name, std::string("fp32-microbatch4-accum2"));
        QCOMPARE(window.queuePlan(QStringLiteral("default")), 0); // already queued
        QTRY_COMPARE(window.runModel()->rowCount(), 3);           // two study runs and the queued one
        QCOMPARE(window.runModel()->index(2, RunTableModel::State).data().toString(), QStringLiteral("queued"));
    }

    // A plan's runs that its TorchScript module cannot take are skipped, and a dialog gives each
    // reason: one by the config's rules, one by the engine, which loads the module (a real engine
    // process on a module written by Debian's python3-torch). The rest are queued.
    void runsTheModuleCannotTakeAreSkippedAndSaidWhy()
    {
        const QString modules = m_dir.filePath(QStringLiteral("modules"));
        QProcess python;
        python.setProcessChannelMode(QProcess::ForwardedChannels);
        python.start(QStringLiteral("/usr/bin/python3"),
                     {optlog::testing::sourcePath(QStringLiteral("tests/engine/torchscript_modules.py")), modules});
        QVERIFY2(python.waitForFinished(120000) && python.exitCode() == 0,
                 "torchscript_modules.py failed: it needs Debian's python3-torch (packaging/setup.sh installs it)");
        const QString module = QStringLiteral("\"model.source=torchscript\", \"model.path=%1/plain.pt\", "
                                              "\"model.context_length=16\", \"data.corpus=generated\"")
                                   .arg(modules);
        const QString planPath = m_dir.filePath(QStringLiteral("module-plan.toml"));
        QFile plan(planPath);
        QVERIFY(plan.open(QIODevice::WriteOnly));
        plan.write(QStringLiteral("name = \"module\"\nbaseline = \"plain\"\n"
                                  "[[run]]\nname = \"plain\"\npreset = \"smoke\"\noverrides = [%1]\n"
                                  "[[run]]\nname = \"checkpointed\"\npreset = \"smoke\"\n"
                                  "overrides = [%1, \"memory.checkpoint_every=1\"]\n"
                                  "[[run]]\nname = \"chunked\"\npreset = \"smoke\"\n"
                                  "overrides = [%1, \"memory.attention=chunked\"]\n")
                       .arg(module)
                       .toUtf8());
        plan.close();

        MainWindow window(optlog::testing::optlogBinary());
        QVERIFY(window.openStudy(m_dir.filePath(QStringLiteral("module.sqlite"))));
        QCOMPARE(window.queuePlan(planPath), 1);
        QCOMPARE(window.queue()->entries().size(), 1);
        QCOMPARE(window.queue()->entries().front().run.name, std::string("plain"));
        auto *box = window.findChild<QMessageBox *>(QStringLiteral("skippedRuns"));
        QVERIFY(box);
        QVERIFY(box->isVisible() && !box->isModal());
        const QString reasons = box->informativeText();
        QVERIFY2(reasons.contains(QStringLiteral("checkpointed: memory.checkpoint_every = 1: "))
                     && reasons.contains(QStringLiteral("has no blocks to checkpoint")),
                 qPrintable(reasons));
        QVERIFY2(reasons.contains(QStringLiteral("chunked: config: memory.attention = \"chunked\"")),
                 qPrintable(reasons));
        box->accept();
    }

    void anEmptyStudyOffersTheOptimizationLog()
    {
        MainWindow window(optlog::testing::optlogBinary());
        QVERIFY(window.openStudy(m_dir.filePath(QStringLiteral("empty.sqlite"))));
        auto *pages = window.runsView()->findChild<QStackedWidget *>();
        QCOMPARE(pages->currentIndex(), 0); // "No runs yet"
        auto *offer = window.runsView()->findChild<QPushButton *>();
        QVERIFY(offer->text().contains(QStringLiteral("optimization-log")));
        offer->click();
        QVERIFY(window.queue()->entries().size() >= 6);
        QTRY_COMPARE(pages->currentIndex(), 1); // the table, with the queued runs
        QVERIFY(!window.queue()->isRunning());  // queued, not started: the user starts it
    }

    void exportsAReportOfTheRunsInCompare()
    {
        const QString study = m_dir.filePath(QStringLiteral("export.sqlite"));
        {
            Store store(study.toStdString());
            for (const char *name : {"fp32", "bf16"}) {
                const int64_t id = store.createRun(name, "");
                store.appendValidation(id, {{9, 10240, 2.5}});
                store.finishRun(id, Outcome::Completed, 9, "");
            }
        }
        MainWindow window(optlog::testing::optlogBinary());
        QVERIFY(window.openStudy(study));
        QTRY_COMPARE(window.runModel()->rowCount(), 2);
        const QString path = m_dir.filePath(QStringLiteral("export.html"));
        QVERIFY(window.exportReportTo(path));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray html = file.readAll();
        QVERIFY(html.contains("<table class=\"verdicts\""));
        QVERIFY(html.contains("<td>fp32 (baseline)</td>"));
        QVERIFY(html.contains("<td>bf16</td>"));

        // An unknown format is refused with the formats that work, and nothing is written.
        QString message;
        QTimer::singleShot(0, this, [&message] {
            if (auto *box = qobject_cast<QMessageBox *>(QApplication::activeModalWidget())) {
                message = box->text();
                box->accept();
            }
        });
        QVERIFY(!window.exportReportTo(m_dir.filePath(QStringLiteral("export.docx"))));
        QVERIFY2(message.contains(QStringLiteral(".html, .pdf, .md, .csv or .json")), qPrintable(message));
        QVERIFY(!QFile::exists(m_dir.filePath(QStringLiteral("export.docx"))));
    }

    void theRunsDockFitsItsColumnsUntilTheUserDragsIt()
    {
        QSettings().clear(); // no saved layout
        MainWindow window(optlog::testing::optlogBinary());
        auto *dock = window.findChild<QDockWidget *>(QStringLiteral("runsDock"));
        QVERIFY(dock);
        const int allColumns = window.runsView()->widthForAllColumns();
        window.resize(1280, 800);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        // Too narrow for every column: the pages keep their room, the dock's other columns scroll.
        QVERIFY(allColumns > 350);
        QTRY_VERIFY2(qAbs(dock->width() - 350) <= 2, qPrintable(QString::number(dock->width())));
        // Wider: the dock takes what the pages do not need...
        window.resize(1600, 900);
        QTRY_VERIFY2(qAbs(dock->width() - qMin(allColumns, 500)) <= 2, qPrintable(QString::number(dock->width())));
        // ...up to every column, and no more.
        QVERIFY(1920 - 1100 > allColumns);
        window.resize(1920, 1080);
        QTRY_VERIFY2(qAbs(dock->width() - allColumns) <= 2, qPrintable(QString::number(dock->width())));
        // Once the user drags the edge, the window's size no longer moves it.
        window.resizeDocks({dock}, {300}, Qt::Horizontal);
        QTRY_COMPARE(dock->width(), 300);
        window.resize(1600, 900);
        QTest::qWait(100);
        QCOMPARE(dock->width(), 300);
        window.resize(1280, 800);
        QTest::qWait(100);
        QCOMPARE(dock->width(), 300);
    }

    // The one thing a comparison is for, in view without scrolling at 1280x800: every technique's
    // quality verdict and action, whole, with eight groups of long names; and in the Runs list,
    // what each run measured beside its name.
    void theDecisionIsInViewAt1280x800()
    {
        QSettings().clear(); // the fitted dock, not a saved layout
        const QString study = m_dir.filePath(QStringLiteral("decision.sqlite"));
        QList<qint64> ids;
        {
            Store store(study.toStdString());
            for (int r = 0; r < 8; ++r) {
                const std::string name = "technique-" + std::to_string(r)
                                         + "-with-a-name-as-long-as-people-write-them-in-a-sweep";
                const int64_t id = store.createRun(name, "");
                store.appendMetrics(id, testing::steadySteps(20, 1000, 5000 + 700 * r));
                store.appendValidation(id, {{19, 20000, 2.5 + 0.013 * r}});
                store.replaceMemory(id, {{MemoryRole::Peak, "mixed", (400 - 30 * r) << 20, MemorySource::Measured}});
                store.finishRun(id, Outcome::Completed, 19, "");
                ids << id;
            }
        }
        MainWindow window(optlog::testing::optlogBinary());
        window.resize(1280, 800);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(window.openStudy(study));
        QTRY_COMPARE(window.runModel()->rowCount(), 8);
        window.compareView()->setSelectedRuns(ids);
        window.showPage(2);
        DecisionSummary *summary = window.compareView()->decisionSummary();
        QTRY_COMPARE(summary->rowCount(), 8);
        QTRY_VERIFY(summary->isVisible() && summary->viewport()->width() > 0);
        QTest::qWait(50); // the layout settles on the shown page

        for (int row = 0; row < summary->rowCount(); ++row) {
            for (int column : {int(DecisionSummary::Quality), int(DecisionSummary::Speed), int(DecisionSummary::Memory),
                               int(DecisionSummary::Action)}) {
                const QModelIndex index = summary->model()->index(row, column);
                const QRect cell = summary->visualRect(index);
                const QString where
                    = QStringLiteral("row %1, column %2: %3").arg(row).arg(column).arg(index.data().toString());
                QVERIFY2(summary->viewport()->rect().contains(cell), qPrintable(where));
                const QRect inWindow(summary->viewport()->mapTo(&window, cell.topLeft()), cell.size());
                QVERIFY2(window.rect().contains(inWindow), qPrintable(where));
                // The whole text within its cell: wrapped onto its lines, never cut.
                const QRect needed = QFontMetrics(summary->font())
                                         .boundingRect(cell.adjusted(4, 0, -4, 0), Qt::TextWordWrap,
                                                       index.data().toString());
                QVERIFY2(needed.width() <= cell.width() - 6 && needed.height() <= cell.height(), qPrintable(where));
            }
        }
        QCOMPARE(summary->item(0, DecisionSummary::Action)->text(), QStringLiteral("baseline"));

        auto *runs = window.runsView()->findChild<QTableView *>();
        QVERIFY(runs);
        for (int column : {RunTableModel::Name, RunTableModel::ValidationLoss, RunTableModel::TokensPerSecond,
                           RunTableModel::PeakMemory}) {
            const QRect cell = runs->visualRect(runs->model()->index(0, column));
            QVERIFY2(runs->viewport()->rect().contains(cell), qPrintable(QString::number(column)));
        }
    }

    void windowStateIsRestored()
    {
        {
            MainWindow window(optlog::testing::optlogBinary());
            window.show();
            window.resize(1000, 700);
            window.showPage(2);
            QVERIFY(QTest::qWaitForWindowExposed(&window));
            window.close();
        }
        MainWindow again(optlog::testing::optlogBinary());
        again.show();
        QVERIFY(QTest::qWaitForWindowExposed(&again));
        QCOMPARE(again.size(), QSize(1000, 700));
        QCOMPARE(again.findChild<QTabWidget *>()->currentIndex(), 2);
    }

private:
    QTemporaryDir m_dir;
};

QTEST_MAIN(tst_MainWindow)
#include "tst_mainwindow.moc"
