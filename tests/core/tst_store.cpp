// SPDX-License-Identifier: MIT
#include "core/store/curation.h"
#include "core/store/remoteruns.h"
#include "core/store/store.h"

#include <SQLiteCpp/SQLiteCpp.h>

#include <QtTest>
#include <atomic>
#include <thread>

using namespace optlog;

namespace {

QByteArray fileBytes(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

std::vector<StepMetrics> someMetrics(int64_t firstStep, int count)
{
    std::vector<StepMetrics> rows;
    for (int i = 0; i < count; ++i) {
        StepMetrics m;
        m.step = firstStep + i;
        m.tokens = (m.step + 1) * 256;
        m.trainLoss = 5.0 - 0.01 * double(m.step);
        m.learningRate = 1e-3;
        m.gradNorm = 0.5;
        m.stepSeconds = 0.1;
        m.tokensPerSecond = 2560;
        m.lossScale = 1024;
        m.skipped = m.step == 3;
        m.machineGflops = m.step % 5 == 0 ? 150.0 : 0.0;
        rows.push_back(m);
    }
    return rows;
}

} // namespace

class tst_Store : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void roundTrip();
    void newStudyIsWalWithCurrentSchema();
    void migratesFromVersionOne();
    void refusesNewerSchemaWithoutTouchingIt_data();
    void refusesNewerSchemaWithoutTouchingIt();
    void refusesFilesThatAreNotStudies_data();
    void refusesFilesThatAreNotStudies();
    void readOnlyOpenOfMissingStudyFails();
    void marksRunsOfDeadProcessesCrashed();
    void unknownOutcomeReadsAsAFailureThatNamesIt();
    void memoryComesBackInTheRolesOrder();
    void groupsSpreadsStepsAndNumericsRoundTrip();
    void aVersionFourStudyMigratesWithItsRunsUnchanged();
    void readersReadWhileTheWriterWrites();
    void aRunOnAnotherMachineKeepsItsPlaceAndIsGatheredWhole();
    void memoryTimelinesAreKeptByStepCopiedAndDroppedPastAResume();
};

void tst_Store::roundTrip()
{
    QTemporaryDir dir;
    const std::string path = dir.filePath("study.sqlite").toStdString();
    int64_t id = 0;
    {
        Store store(path);
        id = store.createRun("fp32", "name = 'fp32'\n");
        store.setEnvironment(id, R"({"libtorch_version":"1.13.0"})");
        store.appendMetrics(id, someMetrics(0, 10));
        store.appendValidation(id, {{4, 1280, 4.5}, {9, 2560, 4.0}});
        store.replaceMemory(id, {{MemoryRole::Parameters, "float32", 4000, MemorySource::Predicted},
                                 {MemoryRole::Parameters, "float32", 4000, MemorySource::Measured},
                                 {MemoryRole::Peak, "mixed", 9000, MemorySource::Measured}});
        store.addEvent(id, EventKind::Started, "data: test");
        store.finishRun(id, Outcome::Completed, 9, "");
    }
    Store store(path, Store::Access::ReadOnly);
    const auto runs = store.runs();
    QCOMPARE(runs.size(), size_t(1));
    QCOMPARE(runs[0].name, std::string("fp32"));
    QVERIFY(runs[0].isFinished());
    QCOMPARE(std::string(outcomeName(runs[0].outcome)), std::string("completed"));
    QCOMPARE(runs[0].outcomeStep, int64_t(9));
    QCOMPARE(runs[0].configToml, std::string("name = 'fp32'\n"));
    QCOMPARE(runs[0].environmentJson, std::string(R"({"libtorch_version":"1.13.0"})"));
    const auto metrics = store.metrics(id);
    QCOMPARE(metrics.size(), size_t(10));
    QCOMPARE(metrics[3].tokens, int64_t(1024));
    QCOMPARE(metrics[3].trainLoss, 4.97);
    QCOMPARE(metrics[3].lossScale, 1024.0);
    QVERIFY(metrics[3].skipped && !metrics[4].skipped);
    QCOMPARE(metrics[5].machineGflops, 150.0); // timed at this step
    QCOMPARE(metrics[4].machineGflops, 0.0);   // not timed: NULL in the file, 0 here
    QCOMPARE(store.validation(id).back().loss, 4.0);
    QCOMPARE(store.memory(id).size(), size_t(3));
    QCOMPARE(store.events(id).front().message, std::string("data: test"));
    QCOMPARE(store.findRun("fp32")->id, id);
    QCOMPARE(store.findRun(std::to_string(id))->name, std::string("fp32"));
    QVERIFY(!store.findRun("nope"));
    QCOMPARE(store.requireRunNamed("fp32").id, id);
    try {
        store.requireRunNamed("nope");
        QFAIL("a missing run was found");
    } catch (const StoreError &e) {
        QCOMPARE(std::string(e.what()), "no run 'nope' in " + path + "; `optlog runs " + path + " --all` lists them");
    }
    try {
        store.requireRunNamed("a\nb");
        QFAIL("a missing run was found");
    } catch (const StoreError &e) {
        QVERIFY2(std::string(e.what()).find("no run 'a\\nb' in") == 0, e.what()); // escaped: the refusal stays one line
    }
}

void tst_Store::newStudyIsWalWithCurrentSchema()
{
    QTemporaryDir dir;
    const std::string path = dir.filePath("study.sqlite").toStdString();
    Store store(path);
    QCOMPARE(store.schemaVersion(), Store::kSchemaVersion);
    QCOMPARE(store.studySeed(), Store::kDefaultStudySeed);
    SQLite::Database db(path, SQLite::OPEN_READONLY);
    QCOMPARE(db.execAndGet("PRAGMA journal_mode").getString(), std::string("wal"));
    QCOMPARE(db.execAndGet("PRAGMA application_id").getInt(), Store::kApplicationId);
}

void tst_Store::migratesFromVersionOne()
{
    QTemporaryDir dir;
    const std::string path = dir.filePath("old.sqlite").toStdString();
    Store::createAtVersion(path, 1);
    {
        // A version-1 study with a run in it: the run and its metrics must survive the migration.
        SQLite::Database db(path, SQLite::OPEN_READWRITE);
        db.exec("INSERT INTO meta (key, value) VALUES ('study_seed', '99')");
        db.exec("INSERT INTO runs (name, config_toml, status, outcome, created_at) "
                "VALUES ('old', '', 'finished', 'completed', '2026-01-01T00:00:00Z')");
        db.exec("INSERT INTO metrics (run_id, step, tokens, train_loss) VALUES (1, 0, 64, 5.5)");
    }
    {
        const Store reader(path, Store::Access::ReadOnly); // a reader migrates a study it may write, once
        QCOMPARE(reader.schemaVersion(), Store::kSchemaVersion);
    }
    Store store(path);
    QCOMPARE(store.schemaVersion(), Store::kSchemaVersion);
    QCOMPARE(store.studySeed(), int64_t(99));
    QCOMPARE(store.runs().front().name, std::string("old"));
    QCOMPARE(store.metrics(1).front().trainLoss, 5.5);
    store.replaceMemory(1, {{MemoryRole::Peak, "mixed", 1, MemorySource::Measured}}); // the version-2 table exists
    store.setEnvironment(1, "{}");
    store.setDtypes(1, R"({"weights":"float32"})"); // and version 3's columns
    QCOMPARE(store.memory(1).size(), size_t(1));
    QCOMPARE(store.metrics(1).front().lossScale, 0.0);
    QCOMPARE(store.metrics(1).front().machineGflops, 0.0); // version 4's column, NULL for old rows
    QCOMPARE(store.runs().front().dtypesJson, std::string(R"({"weights":"float32"})"));
}

void tst_Store::refusesNewerSchemaWithoutTouchingIt_data()
{
    QTest::addColumn<int>("version");
    QTest::addColumn<QString>("expected");
    QTest::newRow("newer") << 99
                           << QString("schema version 99, newer than this optlog knows (%1)").arg(Store::kSchemaVersion);
    // Found by fuzz_studyfile: a negative version went to the migrations as an index, and the
    // command ended on a std::out_of_range instead of a refusal.
    QTest::newRow("negative") << -61 << QString("schema version -61, which no optlog writes");
}

void tst_Store::refusesNewerSchemaWithoutTouchingIt()
{
    QFETCH(int, version);
    QFETCH(QString, expected);
    QTemporaryDir dir;
    const QString path = dir.filePath("future.sqlite");
    {
        Store store(path.toStdString());
        store.createRun("kept", "");
    }
    {
        SQLite::Database db(path.toStdString(), SQLite::OPEN_READWRITE);
        db.exec("PRAGMA user_version = " + std::to_string(version));
        db.exec("PRAGMA journal_mode = DELETE"); // one file, so its bytes say everything
    }
    const QByteArray before = fileBytes(path);
    for (const auto access : {Store::Access::ReadWrite, Store::Access::ReadOnly}) {
        try {
            Store store(path.toStdString(), access);
            QFAIL("the schema version was accepted");
        } catch (const StoreError &e) {
            QVERIFY2(QString(e.what()).contains(expected), e.what());
        }
    }
    QCOMPARE(fileBytes(path), before);
    QVERIFY(!QFile::exists(path + "-wal"));
}

void tst_Store::refusesFilesThatAreNotStudies_data()
{
    QTest::addColumn<QByteArray>("content");
    QTest::addColumn<bool>("sqlite");
    QTest::addColumn<QString>("expected");
    QTest::newRow("text") << QByteArray("hello, not a database\n") << false << "it is not an SQLite database";
    QTest::newRow("other application") << QByteArray() << true << "an SQLite database of another application";
}

void tst_Store::refusesFilesThatAreNotStudies()
{
    QFETCH(QByteArray, content);
    QFETCH(bool, sqlite);
    QFETCH(QString, expected);
    QTemporaryDir dir;
    const QString path = dir.filePath("file");
    if (sqlite) {
        SQLite::Database db(path.toStdString(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
        db.exec("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('mine')");
    } else {
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(content);
    }
    const QByteArray before = fileBytes(path);
    try {
        Store store(path.toStdString());
        QFAIL("a file that is not a study was accepted");
    } catch (const StoreError &e) {
        QVERIFY2(QString(e.what()).contains(expected), e.what());
    }
    QCOMPARE(fileBytes(path), before);
}

void tst_Store::readOnlyOpenOfMissingStudyFails()
{
    QTemporaryDir dir;
    const QString path = dir.filePath("missing.sqlite");
    QVERIFY_EXCEPTION_THROWN(Store(path.toStdString(), Store::Access::ReadOnly), StoreError);
    QVERIFY(!QFile::exists(path));
}

void tst_Store::marksRunsOfDeadProcessesCrashed()
{
    QTemporaryDir dir;
    const std::string path = dir.filePath("study.sqlite").toStdString();
    {
        Store store(path);
        const int64_t id = store.createRun("ghost", "");
        store.appendMetrics(id, someMetrics(0, 5));
        // Pretend another process wrote it and is gone: a pid that cannot exist.
        SQLite::Database db(path, SQLite::OPEN_READWRITE);
        db.exec("UPDATE runs SET pid = 2147483000, pid_start = '1'");
        store.createRun("alive", ""); // written by this very process, which is alive
        store.createRun("stillborn", "");
        db.exec("UPDATE runs SET pid = 2147483000, pid_start = '1' WHERE name = 'stillborn'");
    }
    Store store(path);
    const auto ghost = store.findRun("ghost");
    QVERIFY(ghost->isFinished());
    QCOMPARE(std::string(outcomeName(ghost->outcome)), std::string("crashed"));
    QCOMPARE(ghost->outcomeStep, int64_t(4));
    QVERIFY(QString::fromStdString(ghost->message).contains("metrics up to step 4 are kept"));
    QCOMPARE(store.metrics(ghost->id).size(), size_t(5));
    QVERIFY(!store.findRun("alive")->isFinished()); // still running
    // A run whose engine died before its first step has no step to name.
    const auto stillborn = store.findRun("stillborn");
    QCOMPARE(stillborn->outcomeStep, int64_t(-1));
    QVERIFY2(QString::fromStdString(stillborn->message).endsWith("it ended before its first step"),
             stillborn->message.c_str());
}

void tst_Store::unknownOutcomeReadsAsAFailureThatNamesIt()
{
    QTemporaryDir dir;
    const std::string path = dir.filePath("study.sqlite").toStdString();
    {
        Store store(path);
        store.finishRun(store.createRun("edited", ""), Outcome::Completed, 9, "all fine");
        SQLite::Database db(path, SQLite::OPEN_READWRITE);
        db.exec("UPDATE runs SET outcome = 'vanished'");
    }
    const Store store(path, Store::Access::ReadOnly);
    const RunRecord run = store.runs().at(0);
    QCOMPARE(std::string(outcomeName(run.outcome)), std::string("failed"));
    QVERIFY2(run.message.find("'vanished'") != std::string::npos && run.message.find("all fine") != std::string::npos,
             run.message.c_str());
}

void tst_Store::memoryComesBackInTheRolesOrder()
{
    QTemporaryDir dir;
    const std::string path = dir.filePath("study.sqlite").toStdString();
    Store store(path);
    const int64_t id = store.createRun("fp32", "");
    store.replaceMemory(id, {{MemoryRole::PeakRss, "mixed", 5, MemorySource::Measured},
                             {MemoryRole::Peak, "mixed", 4, MemorySource::Measured},
                             {MemoryRole::Peak, "mixed", 3, MemorySource::Predicted},
                             {MemoryRole::Parameters, "float32", 1, MemorySource::Measured},
                             {MemoryRole::Parameters, "float32", 1, MemorySource::Predicted}});
    {
        // A role from a newer optlog stays in the file; this one does not read it.
        SQLite::Database db(path, SQLite::OPEN_READWRITE);
        db.exec("INSERT INTO memory (run_id, role, source, dtype, bytes) VALUES (1, 'kv_cache', 'measured', '', 9)");
    }
    std::vector<std::pair<std::string, std::string>> read;
    for (const auto &row : store.memory(id))
        read.push_back({memoryRoleName(row.role), memorySourceName(row.source)});
    const std::vector<std::pair<std::string, std::string>> expected = {{"parameters", "predicted"},
                                                                       {"parameters", "measured"},
                                                                       {"peak", "predicted"},
                                                                       {"peak", "measured"},
                                                                       {"peak_rss", "measured"}};
    QVERIFY(read == expected);
}

void tst_Store::groupsSpreadsStepsAndNumericsRoundTrip()
{
    QTemporaryDir dir;
    const std::string path = dir.filePath("study.sqlite").toStdString();
    {
        Store store(path);
        const int64_t single = store.createRun("fp32", "");
        const int64_t replicate = store.createRun("bf16 seed 2", "", "bf16");
        store.appendValidation(replicate, {{9, 2560, 4.0, 32, 0.5}});
        store.addEvent(replicate, EventKind::LossSpike, "loss 9.1 > 3 x median 2.8", 7);
        store.addEvent(single, EventKind::Note, "no step");
        TensorNumerics gradient;
        gradient.step = 24;
        gradient.tensor = "blocks.0.mlp.fc.weight";
        gradient.fp16Underflow = 0.125;
        gradient.lossScale = 1024;
        TensorNumerics activations;
        activations.step = 24;
        activations.tensor = "blocks.0";
        activations.activationMax = 31.5;
        store.appendNumerics(replicate, {gradient, activations});
        StepMetrics diverged;
        diverged.step = 0;
        diverged.trainLoss = std::nan("");
        store.appendMetrics(single, {diverged});
    }
    const Store store(path, Store::Access::ReadOnly);
    QCOMPARE(store.findRun("fp32")->group, std::string("fp32")); // a group of its own
    const RunRecord replicate = *store.findRun("bf16 seed 2");
    QCOMPARE(replicate.group, std::string("bf16"));
    const ValidationPoint point = store.validation(replicate.id).front();
    QCOMPARE(point.sequences, int64_t(32));
    QCOMPARE(point.samplingError(), 0.5 / std::sqrt(32.0));
    QCOMPARE(store.events(replicate.id).front().step, int64_t(7));
    QCOMPARE(store.events(replicate.id).front().kind, EventKind::LossSpike);
    QCOMPARE(store.events(store.findRun("fp32")->id).front().step, int64_t(-1));
    const auto numerics = store.numerics(replicate.id);
    QCOMPARE(numerics.size(), size_t(2));
    QCOMPARE(numerics[0].tensor, std::string("blocks.0")); // by step, then tensor
    QCOMPARE(numerics[0].activationMax, 31.5);
    QVERIFY(std::isnan(numerics[0].fp16Underflow)); // not applicable stays not applicable
    QCOMPARE(numerics[1].fp16Underflow, 0.125);
    QCOMPARE(numerics[1].lossScale, 1024.0);
    QVERIFY(std::isnan(store.metrics(store.findRun("fp32")->id).front().trainLoss)); // not read back as 0
}

void tst_Store::aVersionFourStudyMigratesWithItsRunsUnchanged()
{
    QTemporaryDir dir;
    const std::string path = dir.filePath("v4.sqlite").toStdString();
    Store::createAtVersion(path, 4);
    {
        SQLite::Database db(path, SQLite::OPEN_READWRITE);
        db.exec("INSERT INTO meta (key, value) VALUES ('study_seed', '1234')");
        db.exec("INSERT INTO runs (name, config_toml, status, outcome, outcome_step, created_at) "
                "VALUES ('fp32', '', 'finished', 'completed', 9, '2026-11-01T00:00:00Z')");
        db.exec("INSERT INTO validation (run_id, step, tokens, loss) VALUES (1, 9, 2560, 4.0)");
        db.exec("INSERT INTO events (run_id, at, kind, message) VALUES (1, '2026-11-01T00:00:00Z', 'started', 'x')");
    }
    Store store(path);
    QCOMPARE(store.schemaVersion(), Store::kSchemaVersion);
    const RunRecord run = store.runs().at(0);
    QCOMPARE(run.name, std::string("fp32"));
    QCOMPARE(run.group, std::string("fp32"));
    QCOMPARE(std::string(outcomeName(run.outcome)), std::string("completed"));
    const ValidationPoint point = store.validation(1).at(0);
    QCOMPARE(point.loss, 4.0);
    QCOMPARE(point.sequences, int64_t(0));
    QVERIFY(std::isnan(point.samplingError())); // unknown for a run that did not record it
    QCOMPARE(store.events(1).at(0).step, int64_t(-1));
    QVERIFY(store.numerics(1).empty());
}

void tst_Store::readersReadWhileTheWriterWrites()
{
    QTemporaryDir dir;
    const std::string path = dir.filePath("study.sqlite").toStdString();
    Store writer(path);
    const int64_t id = writer.createRun("busy", "");
    std::atomic<bool> done{false};
    std::atomic<int> reads{0};
    std::string readerError;
    std::thread reader([&] {
        try {
            Store store(path, Store::Access::ReadOnly);
            size_t last = 0;
            while (!done.load()) {
                const size_t now = store.metrics(id).size();
                if (now < last)
                    throw std::runtime_error("metrics went backwards");
                last = now;
                reads.fetch_add(1);
            }
        } catch (const std::exception &e) {
            readerError = e.what();
        }
    });
    for (int batch = 0; batch < 200; ++batch)
        writer.appendMetrics(id, someMetrics(batch * 50, 50));
    done.store(true);
    reader.join();
    QVERIFY2(readerError.empty(), readerError.c_str());
    QVERIFY(reads.load() > 0);
    QCOMPARE(writer.metrics(id).size(), size_t(10000));
}

void tst_Store::aRunOnAnotherMachineKeepsItsPlaceAndIsGatheredWhole()
{
    QTemporaryDir dir;
    const std::string hostPath = dir.filePath("host.sqlite").toStdString();
    const std::string laptopPath = dir.filePath("laptop.sqlite").toStdString();
    Store host(hostPath);
    const int64_t there = host.createRun("far", "name = 'far'\n");
    host.appendMetrics(there, someMetrics(0, 10));
    host.appendEvents(there, {{"2026-01-02T03:04:05Z", EventKind::Warning, "hot", 4}});
    Store laptop(laptopPath);
    RunRecord copy;
    copy.name = "far";
    copy.configToml = "name = 'far'\n";
    copy.host = "gpu-box.example";
    copy.pid = 0;
    // Stored before the host is asked: where it will train, not yet which run it is there.
    const RemotePlace asked{"gpu-box", "/opt/optlog/bin/optlog", hostPath, 0, ""};
    const int64_t here = createRemoteRun(laptop, copy, asked, "6b1f0c2a9d8e4f3b7a5c1e0d2f4a6b8c");
    QVERIFY(!remoteRuns(laptop)[0].answered());
    QCOMPARE(remoteRuns(laptop)[0].startKey, std::string("6b1f0c2a9d8e4f3b7a5c1e0d2f4a6b8c"));
    RunRecord started = copy;
    started.pid = 999999; // no such process here: still not judged dead, its engine is elsewhere
    started.createdAt = "2026-01-02T03:00:00Z";
    started.environmentJson = R"({"device":"cuda"})";
    const RemotePlace place{"gpu-box", "/opt/optlog/bin/optlog", hostPath, there, hostPath + ".logs/a.log"};
    answerRemoteStart(laptop, here, started, place);
    QVERIFY(remoteRuns(laptop)[0].answered());
    QCOMPARE(laptop.requireRun(here).pid, int64_t(999999));
    QCOMPARE(laptop.requireRun(here).createdAt, started.createdAt);
    QCOMPARE(laptop.requireRun(here).environmentJson, started.environmentJson);
    QCOMPARE(laptop.markCrashedRuns(), 0);
    QVERIFY(!laptop.requireRun(here).isFinished());
    QCOMPARE(remotePlace(laptop, here)->study, hostPath);
    QCOMPARE(remotePlace(laptop, here)->runId, there);
    QCOMPARE(remotePlace(laptop, here)->log, place.log);
    // A follower's rows, from where its copy ends.
    laptop.appendMetrics(here, host.metrics(there, 0));
    QCOMPARE(host.metrics(there, 7).size(), size_t(3));
    QCOMPARE(host.metrics(there, 7).front().step, int64_t(7));
    QVERIFY(host.metrics(there, 10).empty());
    laptop.appendEvents(here, host.events(there));
    QCOMPARE(laptop.events(here).front().at, std::string("2026-01-02T03:04:05Z"));
    // Gathering a run still running is refused; once it has ended, the copy becomes the whole run.
    QVERIFY_THROWS_EXCEPTION(StoreError, gatherRemoteRun(laptop, host, there, here));
    host.finishRun(there, Outcome::Completed, 9, "", "2026-01-02T04:00:00Z");
    const int64_t gathered = gatherRemoteRun(laptop, host, there, here);
    QCOMPARE(laptop.runs().size(), size_t(1));
    QCOMPARE(laptop.requireRun(gathered).finishedAt, std::string("2026-01-02T04:00:00Z"));
    QCOMPARE(laptop.metrics(gathered).size(), size_t(10));
    const std::vector<RemoteRun> remote = remoteRuns(laptop);
    QCOMPARE(remote.size(), size_t(1));
    QCOMPARE(remote[0].runId, gathered);
    QVERIFY(!remote[0].gatheredAt.empty());
    QCOMPARE(remote[0].place.host, std::string("gpu-box"));
    QCOMPARE(remote[0].startKey, std::string("6b1f0c2a9d8e4f3b7a5c1e0d2f4a6b8c")); // its start, still known
}

namespace {

MemoryTimeline someTimeline(int64_t step)
{
    MemoryTimeline timeline;
    timeline.source = "allocations";
    timeline.step = step;
    timeline.firstStep = step == 0;
    timeline.events = 3;
    timeline.phases = {{StepPart::Forward, TimelinePhase::kNoBlock, 0, 0, 100, 300},
                       {StepPart::OptimizerStep, TimelinePhase::kNoBlock, 0, 2, 200, 250}};
    timeline.eventOfPoint = {0, 1, 2};
    timeline.bytesOfPoint = {300, 200, 250 + step};
    timeline.statesBefore = {{MemoryRole::Parameters, 100}};
    return timeline;
}

} // namespace

void tst_Store::memoryTimelinesAreKeptByStepCopiedAndDroppedPastAResume()
{
    QTemporaryDir dir;
    const std::string path = dir.filePath("study.sqlite").toStdString();
    Store store(path);
    const int64_t id = store.createRun("fp32", "");
    store.storeTimelines(id, {someTimeline(5), someTimeline(0)});
    store.storeTimelines(id, {someTimeline(5)}); // a step's replaces what it had
    const std::vector<MemoryTimeline> read = store.timelines(id);
    QCOMPARE(read.size(), size_t(2));
    QCOMPARE(read[0].step, int64_t(0));
    QCOMPARE(timelineText(read[1]), timelineText(someTimeline(5)));
    {
        // One a newer optlog wrote, or damaged: left in the file, unread.
        SQLite::Database db(path, SQLite::OPEN_READWRITE);
        db.exec("INSERT INTO memory_timelines (run_id, step, timeline) VALUES (1, 9, '{\"phases\": \"soon\"}')");
    }
    QCOMPARE(store.timelines(id).size(), size_t(2));
    // Copied with the run; a run reopened at a checkpoint keeps the timelines of the steps before it.
    store.finishRun(id, Outcome::Cancelled, 3, "stopped", "");
    const std::string copyPath = dir.filePath("copy.sqlite").toStdString();
    const int64_t copied = copyRunsInto(store, {id}, copyPath, "").front();
    QCOMPARE(Store(copyPath).timelines(copied).size(), size_t(2));
    store.reopenRun(id, 3);
    QCOMPARE(store.timelines(id).size(), size_t(1));
    QCOMPARE(store.timelines(id).front().step, int64_t(0));
}

QTEST_APPLESS_MAIN(tst_Store)
#include "tst_store.moc"
