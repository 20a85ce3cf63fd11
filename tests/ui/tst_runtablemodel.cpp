// SPDX-License-Identifier: MIT
// The runs table model over a real study file, as the engine writes it.
#include "core/config/config.h"
#include "core/store/store.h"
#include "ui/runtablemodel.h"
#include "ui/studywatcher.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

using namespace optlog;

namespace {

std::vector<StepMetrics> steps(int64_t from, int64_t count)
{
    std::vector<StepMetrics> rows;
    for (int64_t s = from; s < from + count; ++s) {
        StepMetrics m;
        m.step = s;
        m.tokens = (s + 1) * 1024;
        m.trainLoss = 5.0 - 0.01 * double(s);
        m.stepSeconds = 0.2;
        m.tokensPerSecond = 5120;
        rows.push_back(m);
    }
    return rows;
}

std::string configWithSteps(int64_t steps)
{
    RunConfig config;
    config.train.steps = steps;
    return toToml(config);
}

} // namespace

class tst_RunTableModel : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init()
    {
        QVERIFY(m_dir.isValid());
        m_path = m_dir.filePath(QStringLiteral("study-%1.sqlite").arg(++m_counter));
    }

    void passesTheModelTesterThroughAStudysLife()
    {
        RunTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        Store store(m_path.toStdString());

        model.setRows(runRows(loadStudySnapshot(m_path.toStdString(), {}), {}));
        QCOMPARE(model.rowCount(), 0);

        const int64_t first = store.createRun("fp32", configWithSteps(100));
        QueueEntry queued;
        queued.id = 7;
        queued.run.name = "bf16";
        queued.state = QueueEntry::State::Queued;
        model.setRows(runRows(loadStudySnapshot(m_path.toStdString(), {}), {queued}));
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.index(0, RunTableModel::Name).data().toString(), QStringLiteral("fp32"));
        QCOMPARE(model.index(0, RunTableModel::State).data().toString(), QStringLiteral("running"));
        QCOMPARE(model.index(1, RunTableModel::State).data().toString(), QStringLiteral("queued"));

        // The engine writes 40 of 100 steps: the row changes in place, with progress and an ETA.
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        store.appendMetrics(first, steps(0, 40));
        model.setRows(runRows(loadStudySnapshot(m_path.toStdString(), {}), {queued}));
        QCOMPARE(changed.count(), 1);
        QCOMPARE(inserted.count(), 0);
        QCOMPARE(model.index(0, RunTableModel::Progress).data().toString(), QStringLiteral("40 / 100"));
        QCOMPARE(model.index(0, RunTableModel::Progress).data(RunTableModel::ProgressRole).toDouble(), 0.4);
        QCOMPARE(model.index(0, RunTableModel::Eta).data().toString(), QStringLiteral("12 s")); // 60 steps x 0.2 s

        // The queued run starts: its queue row gives way to the study's row, in one insert and one removal.
        store.finishRun(first, Outcome::Completed, 99, "");
        const int64_t second = store.createRun("bf16", configWithSteps(100));
        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
        model.setRows(runRows(loadStudySnapshot(m_path.toStdString(), {}), {}));
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(removed.count(), 1);
        QCOMPARE(model.index(0, RunTableModel::State).data().toString(), QStringLiteral("completed"));
        QCOMPARE(model.index(1, RunTableModel::Name).data(RunTableModel::RunIdRole).toLongLong(), second);
        QCOMPARE(model.index(0, RunTableModel::Eta).data().toString(), QString());

        // A failed run shows its message beside the outcome.
        store.finishRun(second, Outcome::Diverged, 12, "loss is NaN at step 12");
        model.setRows(runRows(loadStudySnapshot(m_path.toStdString(), {}), {}));
        QCOMPARE(model.index(1, RunTableModel::State).data().toString(),
                 QStringLiteral("diverged: loss is NaN at step 12"));
    }

    void watcherSeesWhatTheEngineWrites()
    {
        Store store(m_path.toStdString());
        const int64_t run = store.createRun("fp32", configWithSteps(50));
        StudyWatcher watcher;
        watcher.setInterval(100);
        RunTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        connect(&watcher, &StudyWatcher::snapshotChanged, &model,
                [&] { model.setRows(runRows(watcher.snapshot(), {})); });
        watcher.setPath(m_path);
        QTRY_COMPARE(model.rowCount(), 1);

        store.appendMetrics(run, steps(0, 10));
        QTRY_COMPARE(model.index(0, RunTableModel::Progress).data().toString(), QStringLiteral("10 / 50"));
        store.appendMetrics(run, steps(10, 40));
        store.finishRun(run, Outcome::Completed, 49, "");
        QTRY_COMPARE(model.index(0, RunTableModel::State).data().toString(), QStringLiteral("completed"));

        // A finished run is read once and then reused: the snapshot keeps the same object.
        const RunSnapshotPtr before = watcher.snapshot().find(run);
        QSignalSpy spy(&watcher, &StudyWatcher::snapshotChanged);
        watcher.refresh();
        QTRY_VERIFY(spy.count() >= 1);
        QCOMPARE(watcher.snapshot().find(run).get(), before.get());
    }

    void aFileThatIsNotAStudyIsReportedNotThrown()
    {
        QFile junk(m_path);
        QVERIFY(junk.open(QIODevice::WriteOnly));
        junk.write("not a database");
        junk.close();
        const StudySnapshot snapshot = loadStudySnapshot(m_path.toStdString(), {});
        QVERIFY(snapshot.runs.empty());
        QVERIFY2(!snapshot.error.empty(), "the error names what is wrong");
    }

private:
    QTemporaryDir m_dir;
    QString m_path;
    int m_counter = 0;
};

QTEST_MAIN(tst_RunTableModel)
#include "tst_runtablemodel.moc"
