// SPDX-License-Identifier: MIT
// Curating a study: notes, tags, rename, archive, delete, copy between studies, vacuum, and the
// filter the Runs list and `optlog runs --filter` share.
#include "core/analysis/runfilter.h"
#include "core/analysis/runsummary.h"
#include "core/config/configerror.h"
#include "core/config/recordedconfig.h"
#include "core/store/curation.h"
#include "core/store/store.h"
#include "core/store/weights.h"
#include "tests/common/studyfixture.h"

#include <SQLiteCpp/SQLiteCpp.h>

#include <QCryptographicHash>
#include <QtTest>
#include <cmath>

using namespace optlog;
using optlog::testing::addFullRun;
using optlog::testing::configToml;

namespace {

QByteArray sha256(const std::string &path)
{
    QFile file(QString::fromStdString(path));
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QCryptographicHash::hash(file.readAll(), QCryptographicHash::Sha256).toHex();
}

// Rows of `table` whose run no longer exists.
int orphans(const std::string &path, const std::string &table)
{
    SQLite::Database db(path, SQLite::OPEN_READONLY);
    return db.execAndGet("SELECT count(*) FROM " + table + " WHERE run_id NOT IN (SELECT id FROM runs)").getInt();
}

// Every table that holds rows of runs: those with a run_id column.
std::vector<std::string> runTables(const std::string &path)
{
    SQLite::Database db(path, SQLite::OPEN_READONLY);
    SQLite::Statement query(db, "SELECT m.name FROM sqlite_master m, pragma_table_info(m.name) c "
                                "WHERE m.type = 'table' AND c.name = 'run_id'");
    std::vector<std::string> tables;
    while (query.executeStep())
        tables.push_back(query.getColumn(0).getString());
    return tables;
}

bool sameNumber(double a, double b)
{
    return (std::isnan(a) && std::isnan(b)) || a == b;
}

} // namespace

class tst_Curation : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void notesTagsAndArchiveRoundTrip();
    void renameKeepsTheOldNameAndTheGroup();
    void refusedCurationChangesNothing_data();
    void refusedCurationChangesNothing();
    void deleteLeavesNoOrphanRows();
    void deleteRefusesARunThatIsRunning();
    void copyReproducesTheRunsSummaryExactly();
    void copyRefusesClashesAndRunningRunsAndItself();
    void vacuumReportsTheBytesFreed();
    void aVersionFiveStudyMigratesToCuration();
    void filterMatches_data();
    void filterMatches();
    void filterRefusesWhatItCannotRead_data();
    void filterRefusesWhatItCannotRead();
    void filterReadsARecordedRunsOwnKeys();
};

void tst_Curation::notesTagsAndArchiveRoundTrip()
{
    QTemporaryDir dir;
    const std::string path = dir.filePath("s.sqlite").toStdString();
    Store store(path);
    const int64_t id = addFullRun(store, "fp32", "fp32", 0);
    setNote(store, id, "# Why\nthe **baseline**\twith <b>tags</b>");
    changeTags(store, id, {"long", "baseline", "long"}, {});
    changeTags(store, id, {"keep"}, {"baseline", "absent"});
    setArchived(store, id, true);
    const RunRecord run = Store(path, Store::Access::ReadOnly).runs().at(0);
    QCOMPARE(run.note, std::string("# Why\nthe **baseline**\twith <b>tags</b>"));
    QCOMPARE(run.tags, (std::vector<std::string>{"keep", "long"}));
    QVERIFY(run.archived);
    setArchived(store, id, false);
    setNote(store, id, "");
    QVERIFY(!store.runs().at(0).archived);
    QCOMPARE(store.runs().at(0).note, std::string());
}

void tst_Curation::renameKeepsTheOldNameAndTheGroup()
{
    QTemporaryDir dir;
    Store store(dir.filePath("s.sqlite").toStdString());
    const int64_t alone = addFullRun(store, "fp32", "fp32", 0);
    const int64_t replicate = store.createRun("bf16 seed 1", configToml("bf16", "autocast-bf16", 20), "bf16");
    store.finishRun(replicate, Outcome::Completed, 19, "");
    renameRun(store, alone, "baseline");
    renameRun(store, alone, "baseline v2");
    renameRun(store, replicate, "bf16 first");
    const auto runs = store.runs();
    QCOMPARE(runs[0].name, std::string("baseline v2"));
    QCOMPARE(runs[0].formerNames, (std::vector<std::string>{"fp32", "baseline"}));
    QCOMPARE(runs[0].group, std::string("baseline v2")); // a run alone is its own group
    QCOMPARE(runs[1].group, std::string("bf16"));        // a replicate stays in its group
    QCOMPARE(store.findRun("baseline v2")->id, alone);
    QVERIFY(RunFilter::parse("name:baseline").matches(runs[0]));
    QVERIFY(RunFilter::parse("fp32").matches(runs[0])); // the old name is still found
}

void tst_Curation::refusedCurationChangesNothing_data()
{
    QTest::addColumn<QString>("operation");
    QTest::addColumn<QByteArray>("argument");
    QTest::addColumn<QString>("message");
    QTest::newRow("note of 10 KB") << "note" << QByteArray(10 * 1024, 'x') << "at most 8192 bytes";
    QTest::newRow("note with an escape") << "note" << QByteArray("red \x1b[31m") << "U+001B";
    QTest::newRow("note not UTF-8") << "note" << QByteArray("caf\xe9") << "UTF-8";
    QTest::newRow("tag with a space") << "tag" << QByteArray("long context") << "a space";
    QTest::newRow("tag with a tab") << "tag" << QByteArray("long\tcontext") << "U+0009";
    QTest::newRow("tag empty") << "tag" << QByteArray() << "cannot be empty";
    QTest::newRow("tag starting with -") << "tag" << QByteArray("-x") << "add or remove";
    QTest::newRow("rename to a name in use") << "rename" << QByteArray("bf16") << "already has a run named \"bf16\"";
    QTest::newRow("rename to empty") << "rename" << QByteArray() << "cannot be empty";
    QTest::newRow("rename to two lines") << "rename" << QByteArray("a\nb") << "line break";
    QTest::newRow("rename to 300 bytes") << "rename" << QByteArray(300, 'n') << "at most 200 bytes";
    QTest::newRow("a run that does not exist") << "missing" << QByteArray() << "has no run 99";
}

void tst_Curation::refusedCurationChangesNothing()
{
    QFETCH(QString, operation);
    QFETCH(QByteArray, argument);
    QFETCH(QString, message);
    QTemporaryDir dir;
    const std::string path = dir.filePath("s.sqlite").toStdString();
    Store store(path);
    const int64_t id = addFullRun(store, "fp32", "fp32", 0);
    addFullRun(store, "bf16", "autocast-bf16", 0);
    setNote(store, id, "kept");
    store.releaseSpace(); // everything in the main file, so its hash is the study's
    const QByteArray before = sha256(path);
    const std::string text = argument.toStdString();
    try {
        if (operation == "note")
            setNote(store, id, text);
        else if (operation == "tag")
            changeTags(store, id, {text}, {});
        else if (operation == "rename")
            renameRun(store, id, text);
        else
            deleteRun(store, 99);
        QFAIL("the operation was not refused");
    } catch (const StoreError &e) {
        QVERIFY2(QString(e.what()).contains(message), e.what());
    }
    store.releaseSpace();
    QCOMPARE(sha256(path), before);
    QCOMPARE(store.runs().at(0).note, std::string("kept"));
}

void tst_Curation::deleteLeavesNoOrphanRows()
{
    QTemporaryDir dir;
    const std::string path = dir.filePath("s.sqlite").toStdString();
    Store store(path);
    const int64_t gone = addFullRun(store, "fp32", "fp32", 0);
    const int64_t kept = addFullRun(store, "bf16", "autocast-bf16", 0);
    for (const int64_t id : {gone, kept}) {
        changeTags(store, id, {"t"}, {});
        renameRun(store, id, store.requireRun(id).name + " renamed");
        const std::string folder = weightsFolder(store, id);
        QVERIFY(QDir().mkpath(QString::fromStdString(store.absolutePath(folder))));
        QFile weights(QString::fromStdString(store.absolutePath(folder + "/final.pt")));
        QVERIFY(weights.open(QIODevice::WriteOnly) && weights.write("weights") == 7);
        weights.close();
        addWeightFile(store, id, {WeightFileKind::Final, 19, folder + "/final.pt", 7, "00", ""});
        QuantizationResult q;
        q.scheme = "int4";
        q.groupSize = 64;
        q.tensors = "blocks.*";
        q.sensitivity = {{"blocks.0.mlp.fc.weight", 0.01}};
        storeQuantization(store, id, q);
        MemoryTimeline timeline; // one step's, of one phase and one point
        timeline.source = "allocations";
        timeline.step = 2;
        timeline.events = 1;
        timeline.phases = {TimelinePhase{}};
        timeline.eventOfPoint = {0};
        timeline.bytesOfPoint = {64};
        store.storeTimelines(id, {timeline});
    }
    {
        // Both as if they trained on another machine: their places go with them too.
        SQLite::Database db(path, SQLite::OPEN_READWRITE);
        for (const int64_t id : {gone, kept})
            db.exec("INSERT INTO remote_runs (run_id, host, optlog, study, remote_run, log) VALUES ("
                    + std::to_string(id) + ", 'gpu-box', 'optlog', '/far/study.sqlite', 1, '/far/a.log')");
    }
    const std::vector<std::string> tables = runTables(path);
    // metrics, validation, events, memory, numerics, tags, former_names, weight_files, quantizations,
    // ranks, remote_runs, memory_timelines: a new table of run rows joins the check.
    QCOMPARE(tables.size(), size_t(12));
    const QString goneFolder = QString::fromStdString(store.absolutePath(weightsFolder(store, gone)));
    deleteRun(store, gone);
    QVERIFY(!QFileInfo::exists(goneFolder)); // its weights files went with it
    QVERIFY(QFileInfo::exists(QString::fromStdString(store.absolutePath(weightsFolder(store, kept)))));
    {
        // A quantization's sensitivity rows go with it (they hang on the quantization, not the run).
        SQLite::Database db(path, SQLite::OPEN_READONLY);
        QCOMPARE(db.execAndGet("SELECT count(*) FROM quantization_sensitivity WHERE quantization_id NOT IN "
                               "(SELECT id FROM quantizations)")
                     .getInt(),
                 0);
        QCOMPARE(db.execAndGet("SELECT count(*) FROM quantization_sensitivity").getInt(), 1);
    }
    for (const std::string &table : tables) {
        QVERIFY2(orphans(path, table) == 0, table.c_str());
        SQLite::Database db(path, SQLite::OPEN_READONLY);
        QVERIFY2(db.execAndGet("SELECT count(*) FROM " + table + " WHERE run_id = " + std::to_string(kept)).getInt() > 0,
                 table.c_str()); // the other run keeps its rows in every table
    }
    QCOMPARE(store.runs().size(), size_t(1));
    QVERIFY(store.metrics(gone).empty());
}

void tst_Curation::deleteRefusesARunThatIsRunning()
{
    QTemporaryDir dir;
    const std::string path = dir.filePath("s.sqlite").toStdString();
    Store store(path);
    const int64_t id = store.createRun("live", configToml("live", "fp32", 20)); // this process is its engine
    try {
        deleteRun(store, id);
        QFAIL("a running run was deleted");
    } catch (const StoreError &e) {
        QVERIFY2(QString(e.what()).contains("is running") && QString(e.what()).contains("cancel it first"), e.what());
    }
    QCOMPARE(store.runs().size(), size_t(1));
}

void tst_Curation::copyReproducesTheRunsSummaryExactly()
{
    QTemporaryDir dir;
    const std::string sourcePath = dir.filePath("gpu-server.sqlite").toStdString();
    const std::string destPath = dir.filePath("mine.sqlite").toStdString();
    {
        Store source(sourcePath);
        const int64_t id = addFullRun(source, "bf16", "autocast-bf16", 0.1);
        setNote(source, id, "from the server");
        changeTags(source, id, {"server"}, {});
        renameRun(source, id, "bf16 on the server");
        SQLite::Database(sourcePath, SQLite::OPEN_READWRITE)
            .exec("UPDATE meta SET value = '77' WHERE key = 'study_seed'");
        source.releaseSpace();
    }
    const QByteArray sourceBefore = sha256(sourcePath);
    Store dest(destPath);
    addFullRun(dest, "fp32", "fp32", 0);
    const Store source(sourcePath, Store::Access::ReadOnly);
    const std::vector<int64_t> ids = copyRunsFrom(dest, source, {1}, " (server)");
    QCOMPARE(ids.size(), size_t(1));

    const RunRecord original = source.requireRun(1), copy = dest.requireRun(ids[0]);
    QCOMPARE(copy.name, std::string("bf16 on the server (server)"));
    QCOMPARE(copy.note, original.note);
    QCOMPARE(copy.tags, original.tags);
    QCOMPARE(copy.formerNames, original.formerNames);
    QCOMPARE(copy.validationSeed, int64_t(77)); // validated on the source's windows, and says so
    QCOMPARE(dest.requireRun(1).validationSeed, Store::kDefaultStudySeed);
    QCOMPARE(copy.configToml, original.configToml);
    QCOMPARE(copy.environmentJson, original.environmentJson);
    QCOMPARE(copy.dtypesJson, original.dtypesJson);
    QCOMPARE(copy.createdAt, original.createdAt);
    QCOMPARE(copy.outcome, original.outcome);

    const RunSummary a = summarize(source, original), b = summarize(dest, copy);
    QCOMPARE(b.throughput.median, a.throughput.median);
    QCOMPARE(b.throughput.p10, a.throughput.p10);
    QCOMPARE(b.throughput.p90, a.throughput.p90);
    QCOMPARE(b.peakBytes, a.peakBytes);
    QCOMPARE(b.parameters, a.parameters);
    QCOMPARE(b.machine.medianGflops, a.machine.medianGflops);
    QCOMPARE(b.instabilities, a.instabilities);
    QCOMPARE(b.validation.size(), a.validation.size());
    for (size_t i = 0; i < a.validation.size(); ++i) {
        QCOMPARE(b.validation[i].loss, a.validation[i].loss);
        QCOMPARE(b.validation[i].sequenceSd, a.validation[i].sequenceSd);
    }
    QCOMPARE(b.memory.size(), a.memory.size());
    for (size_t i = 0; i < a.memory.size(); ++i)
        QCOMPARE(b.memory[i].bytes, a.memory[i].bytes);
    QCOMPARE(b.numerics.size(), a.numerics.size());
    QVERIFY(sameNumber(b.numerics[0].fp16Subnormal, a.numerics[0].fp16Subnormal));
    // Each rank's record and memory come along.
    QCOMPARE(b.ranks.size(), size_t(2));
    QCOMPARE(b.ranks[1].host, a.ranks[1].host);
    QCOMPARE(b.ranks[1].communicationSeconds, a.ranks[1].communicationSeconds);
    QCOMPARE(b.ranks[1].environmentJson, a.ranks[1].environmentJson);
    QCOMPARE(b.rankMemory.at(1).size(), size_t(2));
    QCOMPARE(b.rankMemory.at(1)[0].bytes, a.rankMemory.at(1)[0].bytes);
    QCOMPARE(b.rankMemory.at(0).size(), b.memory.size());
    const auto metricsA = source.metrics(1), metricsB = dest.metrics(ids[0]);
    QCOMPARE(metricsB.size(), metricsA.size());
    for (size_t i = 0; i < metricsA.size(); ++i) {
        QCOMPARE(metricsB[i].trainLoss, metricsA[i].trainLoss);
        QCOMPARE(metricsB[i].machineGflops, metricsA[i].machineGflops);
    }
    const auto eventsA = source.events(1), eventsB = dest.events(ids[0]);
    QCOMPARE(eventsB.size(), eventsA.size());
    QCOMPARE(eventsB[1].at, eventsA[1].at);
    QCOMPARE(eventsB[1].step, eventsA[1].step);
    QCOMPARE(sha256(sourcePath), sourceBefore); // nothing in the source changed
}

void tst_Curation::copyRefusesClashesAndRunningRunsAndItself()
{
    QTemporaryDir dir;
    const std::string sourcePath = dir.filePath("a.sqlite").toStdString();
    const std::string destPath = dir.filePath("b.sqlite").toStdString();
    Store source(sourcePath);
    addFullRun(source, "fp32", "fp32", 0);
    const int64_t live = source.createRun("live", configToml("live", "fp32", 20));
    Store dest(destPath);
    addFullRun(dest, "fp32", "fp32", 0);
    dest.releaseSpace();
    const QByteArray before = sha256(destPath);
    const auto refused = [&](const Store &from, std::vector<int64_t> ids, const std::string &suffix,
                             const QString &why) {
        try {
            copyRunsFrom(dest, from, ids, suffix);
            return QString("not refused");
        } catch (const StoreError &e) {
            return QString(e.what()).contains(why) ? QString() : QString(e.what());
        }
    };
    QCOMPARE(refused(source, {1}, "", "already has a run named \"fp32\""), QString());
    QCOMPARE(refused(source, {live}, "-x", "still running"), QString());
    QCOMPARE(refused(source, {1, 99}, "-x", "has no run 99"), QString()); // all or none
    QCOMPARE(refused(dest, {1}, "-x", "into itself"), QString());
    dest.releaseSpace();
    QCOMPARE(sha256(destPath), before);
    QCOMPARE(copyRunsFrom(dest, source, {1}, "-a").size(), size_t(1));
}

void tst_Curation::vacuumReportsTheBytesFreed()
{
    QTemporaryDir dir;
    const std::string path = dir.filePath("s.sqlite").toStdString();
    Store store(path);
    std::vector<int64_t> ids;
    for (int i = 0; i < 6; ++i)
        ids.push_back(addFullRun(store, "run " + std::to_string(i), "fp32", 0));
    for (int i = 0; i < 5; ++i) {
        std::vector<StepMetrics> more;
        for (int64_t step = 20; step < 2000; ++step) {
            StepMetrics m;
            m.step = step;
            m.tokens = step * 512;
            m.trainLoss = 4.0;
            m.learningRate = 1e-3;
            m.gradNorm = 0.5;
            m.stepSeconds = 0.1;
            m.tokensPerSecond = 5000;
            more.push_back(m);
        }
        store.appendMetrics(ids[size_t(i)], more);
    }
    for (int i = 0; i < 5; ++i)
        deleteRun(store, ids[size_t(i)]);
    const Compaction compaction = vacuum(store);
    QVERIFY2(compaction.bytesAfter < compaction.bytesBefore / 2,
             qPrintable(QString("%1 -> %2").arg(compaction.bytesBefore).arg(compaction.bytesAfter)));
    QCOMPARE(compaction.bytesAfter, int64_t(QFileInfo(QString::fromStdString(path)).size()));
    QCOMPARE(store.runs().size(), size_t(1));
    QCOMPARE(store.metrics(ids[5]).size(), size_t(20));
}

void tst_Curation::aVersionFiveStudyMigratesToCuration()
{
    QTemporaryDir dir;
    const std::string path = dir.filePath("v5.sqlite").toStdString();
    Store::createAtVersion(path, 5);
    {
        SQLite::Database db(path, SQLite::OPEN_READWRITE);
        db.exec("INSERT INTO meta (key, value) VALUES ('study_seed', '1234')");
        db.exec("INSERT INTO runs (name, config_toml, status, outcome, outcome_step, created_at, group_name) "
                "VALUES ('fp32 seed 1', '', 'finished', 'completed', 9, '2026-11-01T00:00:00Z', 'fp32')");
        db.exec("INSERT INTO metrics (run_id, step, tokens, train_loss) VALUES (1, 0, 64, 5.5)");
    }
    Store store(path);
    QCOMPARE(store.schemaVersion(), Store::kSchemaVersion);
    const RunRecord run = store.runs().at(0);
    QCOMPARE(run.group, std::string("fp32"));
    QVERIFY(run.note.empty() && run.tags.empty() && run.formerNames.empty() && !run.archived);
    QVERIFY(run.derivedFrom.empty());
    QCOMPARE(run.validationSeed, int64_t(1234));
    changeTags(store, 1, {"old"}, {});
    deleteRun(store, 1);
    QCOMPARE(orphans(path, "metrics"), 0);
}

void tst_Curation::filterMatches_data()
{
    QTest::addColumn<QString>("filter");
    QTest::addColumn<QString>("expected"); // names of the runs it keeps, in order
    QTest::newRow("empty keeps all but archived") << ""
                                                  << "fp32,pure,long";
    QTest::newRow("mode by its last name") << "mode:pure-bf16"
                                           << "pure";
    QTest::newRow("mode by its path") << "precision.mode:pure-bf16"
                                      << "pure";
    QTest::newRow("part of a mode") << "mode:bf16"
                                    << "pure,long";
    QTest::newRow("a tag") << "tag:long"
                           << "long";
    QTest::newRow("tag case") << "TAG:Long"
                              << "long";
    QTest::newRow("mode and tag") << "mode:pure-bf16 tag:long"
                                  << "";
    QTest::newRow("not a tag") << "-tag:long"
                               << "fp32,pure";
    QTest::newRow("a number equals") << "steps:300"
                                     << "fp32";
    QTest::newRow("a number is not a part") << "steps:30"
                                            << "";
    QTest::newRow("a word in the note") << "spike"
                                        << "long";
    QTest::newRow("note key") << "note:\"loss spike\""
                              << "long";
    QTest::newRow("a config value anywhere") << "autocast"
                                             << "long";
    QTest::newRow("outcome") << "outcome:oom"
                             << "pure";
    QTest::newRow("group") << "group:fp32"
                           << "fp32";
    QTest::newRow("archived only") << "is:archived"
                                   << "hidden";
    QTest::newRow("archived by mode") << "is:archived mode:fp32"
                                      << "hidden";
}

void tst_Curation::filterMatches()
{
    QFETCH(QString, filter);
    QFETCH(QString, expected);
    QTemporaryDir dir;
    Store store(dir.filePath("s.sqlite").toStdString());
    const int64_t fp32 = store.createRun("fp32", configToml("fp32", "fp32", 300));
    const int64_t pure = store.createRun("pure", configToml("pure", "pure-bf16", 200));
    const int64_t longRun = store.createRun("long", configToml("long", "autocast-bf16", 200));
    const int64_t hidden = store.createRun("hidden", configToml("hidden", "fp32", 200));
    store.finishRun(fp32, Outcome::Completed, 299, "");
    store.finishRun(pure, Outcome::Oom, 3, "");
    store.finishRun(longRun, Outcome::Completed, 199, "");
    store.finishRun(hidden, Outcome::Completed, 199, "");
    changeTags(store, longRun, {"long"}, {});
    setNote(store, longRun, "a loss spike at step 80");
    setArchived(store, hidden, true);
    const RunFilter parsed = RunFilter::parse(filter.toStdString());
    QStringList kept;
    for (const RunRecord &run : store.runs())
        if (parsed.matches(run))
            kept << QString::fromStdString(run.name);
    QCOMPARE(kept.join(','), expected);
}

void tst_Curation::filterRefusesWhatItCannotRead_data()
{
    QTest::addColumn<QString>("filter");
    QTest::addColumn<QString>("message");
    QTest::newRow("unknown key") << "colour:red"
                                 << "'colour' is not a key a filter knows";
    QTest::newRow("unknown outcome") << "outcome:done"
                                     << "no such outcome";
    QTest::newRow("unknown is") << "is:open"
                                << "is:archived";
    QTest::newRow("open quote") << "note:\"loss"
                                << "not closed";
}

void tst_Curation::filterRefusesWhatItCannotRead()
{
    QFETCH(QString, filter);
    QFETCH(QString, message);
    try {
        RunFilter::parse(filter.toStdString());
        QFAIL("accepted");
    } catch (const ConfigError &e) {
        QVERIFY2(QString(e.what()).contains(message), e.what());
        QCOMPARE(e.field(), std::string("filter"));
    }
}

// A run its own trainer recorded (`optlog record`) keeps its trainer's keys: a filter names them
// by their full path or last part once the list says which keys its recorded runs have.
void tst_Curation::filterReadsARecordedRunsOwnKeys()
{
    QTemporaryDir dir;
    Store store(dir.filePath(QStringLiteral("recorded.sqlite")).toStdString());
    const int64_t bf16 = store.createRun("bf16", recordedConfigToml(R"({"amp":"bf16","optim":{"lr":0.001}})"));
    const int64_t fp32 = store.createRun("fp32", recordedConfigToml(R"({"amp":"fp32","optim":{"lr":0.003}})"));
    for (const int64_t id : {bf16, fp32})
        store.setEnvironment(id, R"({"recorder":"a test"})");
    const std::vector<std::string> keys = recordedConfigKeys(store.runs());
    QCOMPARE(QString::fromStdString(keys.front() + " " + keys.back()), QStringLiteral("amp optim.lr"));
    const auto kept = [&](const std::string &text) {
        const RunFilter filter = RunFilter::parse(text, keys);
        QStringList names;
        for (const RunRecord &run : store.runs())
            if (filter.matches(run))
                names << QString::fromStdString(run.name);
        return names.join(QLatin1Char(','));
    };
    QCOMPARE(kept("amp:bf16"), QStringLiteral("bf16"));
    QCOMPARE(kept("optim.lr:0.003"), QStringLiteral("fp32"));
    QCOMPARE(kept("lr:0.001"), QStringLiteral("bf16"));
    QCOMPARE(kept("-amp:bf16"), QStringLiteral("fp32"));
    QCOMPARE(kept("fp32"), QStringLiteral("fp32")); // a bare word reads the values too
    QCOMPARE(QString::fromStdString(recorderOf(store.requireRun(bf16))), QStringLiteral("a test"));
    // Without the keys, the study's own words are still unknown.
    try {
        RunFilter::parse("amp:bf16");
        QFAIL("accepted a key no run has");
    } catch (const ConfigError &e) {
        QVERIFY2(QString(e.what()).contains(QStringLiteral("a key of a recorded run's config")), e.what());
    }
}

QTEST_APPLESS_MAIN(tst_Curation)
#include "tst_curation.moc"
