// SPDX-License-Identifier: MIT
// Data-parallel training: the real `optlog` binary, its ranks as real processes meeting over c10d
// with Gloo on this machine, a real study file; the weights compared are the final weights files.
#include "core/config/config.h"
#include "core/engine/compat/torchcompat.h"
#include "core/engine/model/gpt.h"
#include "core/engine/model/weightfiles.h"
#include "core/engine/precision/precision.h"
#include "core/store/store.h"
#include "core/store/weights.h"
#include "tests/common/buildfeatures.h"
#include "tests/common/enginebinary.h"
#include "tests/common/testpaths.h"

#include <torch/serialize/input-archive.h>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>
#include <csignal>
#include <filesystem>
#include <map>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace optlog;
using optlog::testing::Result;
using optlog::testing::runOptlog;
using optlog::testing::waitForSteps;

namespace {

// dropout 0: the ranks draw dropout masks of their own, which one process would not.
const QStringList kSmoke = {"--preset", "smoke",          "--set", "data.corpus=generated",
                            "--set",    "train.steps=20", "--set", "memory.warmup_steps=2"};

// A run trained into `study` under `name` with the smoke preset and `settings`; fails the test
// unless it completes.
RunRecord train(const QString &study, const QString &name, const QStringList &settings)
{
    QStringList arguments = QStringList{"run", "--db", study, "--set", "name=" + name} + kSmoke;
    for (const QString &setting : settings)
        arguments << "--set" << setting;
    const Result r = runOptlog(arguments);
    if (r.exitCode != 0)
        qWarning().noquote() << "optlog run" << arguments.join(' ') << "exited" << r.exitCode << r.err;
    const auto run = Store(study.toStdString(), Store::Access::ReadOnly).findRun(name.toStdString());
    if (!run)
        return {};
    return *run;
}

// The model's tensors of a run's final weights file, by name, loaded into the model of its config.
std::map<std::string, at::Tensor> finalWeights(const QString &study, int64_t runId)
{
    const Store store(study.toStdString(), Store::Access::ReadOnly);
    std::map<std::string, at::Tensor> tensors;
    const RunConfig config = loadDerivedConfig(store.requireRun(runId).configToml, "the stored run", {});
    for (const WeightFile &file : weightFiles(store, runId)) {
        if (file.kind != WeightFileKind::Final)
            continue;
        GPT model(GPTOptions::from(config));
        model->to(precisionPlan(config.precision.mode).weights);
        torch::serialize::InputArchive archive;
        const std::string path = store.absolutePath(file.path);
        loadVerified(archive, path, file);
        compat::GradDisabledGuard noGrad;
        loadModelWeights(*model, archive, path);
        for (const auto &item : model->named_parameters())
            tensors[item.key()] = item.value().to(at::kDouble);
    }
    return tensors;
}

// The largest element-wise difference between two runs' final weights; infinity when they do not
// hold the same tensors.
double largestDifference(const QString &study, int64_t a, int64_t b)
{
    const auto first = finalWeights(study, a), second = finalWeights(study, b);
    if (first.empty() || first.size() != second.size())
        return INFINITY;
    double largest = 0;
    for (const auto &[name, tensor] : first) {
        const auto other = second.find(name);
        if (other == second.end() || !other->second.sizes().equals(tensor.sizes()))
            return INFINITY;
        largest = std::max(largest, (tensor - other->second).abs().max().item<double>());
    }
    return largest;
}

int64_t bytesOf(const std::vector<MemoryRow> &rows, MemoryRole role, MemorySource source)
{
    for (const MemoryRow &row : rows)
        if (row.role == role && row.source == source)
            return row.bytes;
    return -1;
}

// The pids of `parent`'s children, read from /proc.
QList<qint64> childrenOf(qint64 parent)
{
    QList<qint64> children;
    for (const auto &entry : std::filesystem::directory_iterator("/proc")) {
        QFile stat(QString::fromStdString(entry.path().string()) + "/stat");
        if (!stat.open(QIODevice::ReadOnly))
            continue;
        const QString text = QString::fromUtf8(stat.readAll());
        const QStringList fields = text.mid(text.lastIndexOf(')') + 2).split(' ');
        if (fields.size() > 1 && fields[1].toLongLong() == parent)
            children << QString::fromStdString(entry.path().filename().string()).toLongLong();
    }
    return children;
}

// A TCP port free on the loopback now (the kernel's choice), released for the caller.
uint16_t freePort()
{
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    uint16_t port = 0;
    if (bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof(address)) == 0
        && getsockname(fd, reinterpret_cast<sockaddr *>(&address), &length) == 0)
        port = ntohs(address.sin_port);
    close(fd);
    return port;
}

bool alive(qint64 pid)
{
    QFile stat("/proc/" + QString::number(pid) + "/stat");
    if (!stat.open(QIODevice::ReadOnly))
        return false;
    const QString text = QString::fromUtf8(stat.readAll());
    return !text.mid(text.lastIndexOf(')') + 2).startsWith('Z'); // a zombie has ended
}

// Starts a two-rank smoke run `name` into `study` as `rank0` that would train for long, and waits
// until it trains: rank 1's pid (0 when it did not start or has no rank 1).
qint64 startLongTwoRankRun(QProcess &rank0, const QString &study, const QString &name, const QStringList &settings = {})
{
    QStringList arguments = QStringList{"run", "--db", study, "--set", "name=" + name, "--ranks", "2"} + kSmoke
                            + QStringList{"--set", "train.steps=100000"};
    for (const QString &setting : settings)
        arguments << "--set" << setting;
    rank0.start(optlog::testing::optlogBinary(), arguments);
    if (!waitForSteps(study, 5))
        return 0;
    const QList<qint64> children = childrenOf(rank0.processId());
    return children.size() == 1 ? children.front() : 0;
}

} // namespace

class tst_Distributed : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void twoRanksTrainAsOneProcessWithTwiceTheMicrobatch_data();
    void twoRanksTrainAsOneProcessWithTwiceTheMicrobatch();
    void zeroGivesTheWeightsOfPlainDataParallel_data();
    void zeroGivesTheWeightsOfPlainDataParallel();
    void eachRanksMemoryIsMeasuredBesideItsPrediction();
    void ranksJoinARendezvousGivenByHostAndPort();
    void aStopAtRankZeroStopsEveryRankAtOneStep();
    void aKilledRankEndsTheRunAsCrashedNamingIt();
    void rankZeroKilledTakesItsRanksWithIt();
    void badInputExitsTwoAndWritesNothing_data();
    void badInputExitsTwoAndWritesNothing();

private:
    QTemporaryDir m_dir;
};

void tst_Distributed::twoRanksTrainAsOneProcessWithTwiceTheMicrobatch_data()
{
    QTest::addColumn<QString>("mode");
    QTest::addColumn<int>("accumulation");
    QTest::newRow("fp32") << "fp32" << 1;
    QTest::newRow("fp32, accumulation 2") << "fp32" << 2;
}

void tst_Distributed::twoRanksTrainAsOneProcessWithTwiceTheMicrobatch()
{
    QFETCH(QString, mode);
    QFETCH(int, accumulation);
    const QString study = m_dir.filePath("equal-" + QString(QTest::currentDataTag()).replace(' ', '-') + ".sqlite");
    const QStringList common = {"precision.mode=\"" + mode + "\"",
                                "train.accumulation=" + QString::number(accumulation)};
    const RunRecord single = train(study, "one process", common + QStringList{"train.microbatch=8"});
    const RunRecord ranks = train(study, "two ranks", common + QStringList{"train.microbatch=4", "distributed.ranks=2"});
    QVERIFY(single.id > 0 && ranks.id > 0);

    const Store store(study.toStdString(), Store::Access::ReadOnly);
    const auto alone = store.metrics(single.id), together = store.metrics(ranks.id);
    QCOMPARE(together.size(), size_t(20));
    QCOMPARE(together.size(), alone.size());
    // Tokens count every rank's: the same steps see the same tokens.
    QCOMPARE(together.back().tokens, alone.back().tokens);
    QCOMPARE(together.back().tokens, int64_t(20 * 8 * accumulation * 32));
    for (size_t i = 0; i < alone.size(); ++i) {
        QVERIFY2(std::abs(together[i].trainLoss - alone[i].trainLoss) < 1e-5,
                 qPrintable(
                     QString("step %1: %2 against %3").arg(i).arg(together[i].trainLoss).arg(alone[i].trainLoss)));
        QVERIFY(together[i].communicationSeconds && *together[i].communicationSeconds > 0);
        QVERIFY(!alone[i].communicationSeconds);
    }
    const double difference = largestDifference(study, single.id, ranks.id);
    QVERIFY2(difference <= 1e-5, qPrintable(QString::number(difference)));
    // Only rank 0 validates, on the study's set: the same loss.
    const auto v1 = store.validation(single.id), v2 = store.validation(ranks.id);
    QCOMPARE(v1.size(), v2.size());
    QVERIFY(std::abs(v1.back().loss - v2.back().loss) < 1e-4);
}

void tst_Distributed::zeroGivesTheWeightsOfPlainDataParallel_data()
{
    QTest::addColumn<QString>("mode");
    QTest::addColumn<int>("stage");
    QTest::newRow("fp32, ZeRO-1") << "fp32" << 1;
    QTest::newRow("fp32, ZeRO-2") << "fp32" << 2;
    QTest::newRow("fp32, ZeRO-2, accumulation 2") << "fp32" << 2;
    QTest::newRow("master-bf16, ZeRO-1") << "master-bf16" << 1;
    QTest::newRow("master-bf16, ZeRO-2") << "master-bf16" << 2;
}

void tst_Distributed::zeroGivesTheWeightsOfPlainDataParallel()
{
    QFETCH(QString, mode);
    QFETCH(int, stage);
    const bool accumulate = QString(QTest::currentDataTag()).contains("accumulation");
    const QString study = m_dir.filePath("zero-" + QString(QTest::currentDataTag()).replace(' ', '-') + ".sqlite");
    // Buckets of 64 KiB: the smoke model's 139 KB of FP32 gradients make three, so parameters
    // are cut across buckets and across ranks' parts.
    const QStringList common = {"precision.mode=\"" + mode + "\"", "distributed.ranks=2", "distributed.bucket_mib=1",
                                "train.accumulation=" + QString(accumulate ? "2" : "1")};
    const RunRecord plain = train(study, "plain", common);
    const RunRecord zero = train(study, "zero",
                                 common + QStringList{"distributed.zero_stage=" + QString::number(stage)});
    QVERIFY(plain.id > 0 && zero.id > 0);
    const double difference = largestDifference(study, plain.id, zero.id);
    QVERIFY2(difference <= 1e-6, qPrintable(QString::number(difference)));
    const Store store(study.toStdString(), Store::Access::ReadOnly);
    const auto a = store.metrics(plain.id), b = store.metrics(zero.id);
    QCOMPARE(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i)
        QVERIFY(std::abs(a[i].gradNorm - b[i].gradNorm) < 1e-5 * std::max(1.0, a[i].gradNorm));
}

void tst_Distributed::eachRanksMemoryIsMeasuredBesideItsPrediction()
{
    const QString study = m_dir.filePath("memory.sqlite");
    const QStringList common = {"precision.mode=\"master-bf16\"", "distributed.ranks=2", "distributed.bucket_mib=1"};
    const RunRecord plain = train(study, "plain", common);
    const RunRecord stage1 = train(study, "zero-1", common + QStringList{"distributed.zero_stage=1"});
    const RunRecord stage2 = train(study, "zero-2", common + QStringList{"distributed.zero_stage=2"});
    QVERIFY(plain.id > 0 && stage1.id > 0 && stage2.id > 0);
    const Store store(study.toStdString(), Store::Access::ReadOnly);
    const auto within = [](int64_t measured, int64_t predicted) {
        return measured > 0 && predicted > 0 && std::abs(double(measured - predicted)) <= 0.02 * double(predicted);
    };
    for (int64_t rank : {0, 1}) {
        const auto p = store.memory(plain.id, rank), z1 = store.memory(stage1.id, rank),
                   z2 = store.memory(stage2.id, rank);
        const auto measured = [](const std::vector<MemoryRow> &rows, MemoryRole role) {
            return bytesOf(rows, role, MemorySource::Measured);
        };
        const auto predicted = [](const std::vector<MemoryRow> &rows, MemoryRole role) {
            return bytesOf(rows, role, MemorySource::Predicted);
        };
        // Stage 1: the moments and the master weights are this rank's shard, as predicted.
        QVERIFY(within(measured(z1, MemoryRole::OptimizerState), predicted(z1, MemoryRole::OptimizerState)));
        QVERIFY(within(measured(z1, MemoryRole::MasterWeights), predicted(z1, MemoryRole::MasterWeights)));
        // Stage 2: the gradients too.
        QVERIFY(within(measured(z2, MemoryRole::Gradients), predicted(z2, MemoryRole::Gradients)));
        QVERIFY(within(measured(z2, MemoryRole::OptimizerState), predicted(z2, MemoryRole::OptimizerState)));
        QVERIFY(within(measured(p, MemoryRole::CommunicationBuffers), predicted(p, MemoryRole::CommunicationBuffers)));
        // The shards are the two ranks' halves of plain data parallelism's whole (up to padding).
        const int64_t whole = measured(p, MemoryRole::OptimizerState);
        QVERIFY(std::abs(2 * measured(z1, MemoryRole::OptimizerState) - whole) <= 8 * 4 * 2);
        QVERIFY(std::abs(2 * measured(z2, MemoryRole::Gradients) - measured(p, MemoryRole::Gradients)) <= 8 * 2 * 2);
        QCOMPARE(measured(z1, MemoryRole::Gradients), measured(p, MemoryRole::Gradients));
        QVERIFY(measured(z2, MemoryRole::Peak) < measured(p, MemoryRole::Peak));
    }
    // Each rank's record: where it ran, how it ended, its time in collectives.
    const auto ranks = store.ranks(stage2.id);
    QCOMPARE(ranks.size(), size_t(2));
    for (const RankRecord &rank : ranks) {
        QCOMPARE(rank.outcome, std::string("completed"));
        QVERIFY(rank.pid > 0 && !rank.host.empty() && !rank.environmentJson.empty());
        QCOMPARE(rank.measuredSteps, int64_t(18)); // 20 steps, 2 of warm-up
        QVERIFY(rank.communicationSeconds > 0 && rank.communicationSeconds < rank.stepSeconds);
    }
    QVERIFY(ranks[0].pid != ranks[1].pid);
    QVERIFY(store.ranks(store.findRun("plain")->id).size() == 2);

    // `show` and the report state it.
    const Result show = runOptlog({"show", study, "zero-2"});
    QCOMPARE(show.exitCode, 0);
    QVERIFY2(show.out.contains("batch: 2 ranks x microbatch 4 x accumulation 1 = 8 sequences per step"),
             qPrintable(show.out));
    QVERIFY(show.out.contains("ranks (data parallel, ZeRO stage 2; memory measured / predicted)"));
    QVERIFY(show.out.contains("communication_buffers"));
    // The verdicts say what a step trains on and that the memory is a rank's.
    const Result compare = runOptlog({"compare", study});
    QCOMPARE(compare.exitCode, 0);
    // (The verdict wrapped at 120 columns: read as one line.)
    QVERIFY2(compare.out.simplified().contains("data parallel, batch 2 ranks x microbatch 4 x accumulation 1 = 8 "
                                               "sequences per step, peak memory per rank"),
             qPrintable(compare.out));
    QVERIFY(compare.out.contains("Data parallel, per rank"));
    const QString markdown = m_dir.filePath("memory.md"), json = m_dir.filePath("memory.json");
    const Result drawn = runOptlog({"report", study, "--runs", "zero-2", "--format", "md", "-o", markdown});
    if (testing::buildFeatures().chartReports) {
        QCOMPARE(drawn.exitCode, 0);
        QFile md(markdown);
        QVERIFY(md.open(QIODevice::ReadOnly));
        QVERIFY(QString::fromUtf8(md.readAll())
                    .contains("Data parallel over 2 ranks, ZeRO stage 2 (batch: 2 ranks x "
                              "microbatch 4 x accumulation 1 = 8 sequences per step)"));
    } else {
        // Built without the workbench (against PyTorch's LibTorch, say): Markdown draws charts, so
        // it is refused, naming the formats this build writes.
        QCOMPARE(drawn.exitCode, 2);
        QVERIFY2(drawn.err.contains("csv and json work in this build"), qPrintable(drawn.err));
    }
    QCOMPARE(runOptlog({"report", study, "--runs", "zero-2", "--format", "json", "-o", json}).exitCode, 0);
    QFile js(json);
    QVERIFY(js.open(QIODevice::ReadOnly));
    const QJsonObject run = QJsonDocument::fromJson(js.readAll()).object()["runs"].toArray().at(0).toObject();
    QCOMPARE(run["ranks"].toArray().size(), 2);
    int64_t reportedGradients = -1;
    for (const auto &row : run["ranks"].toArray().at(1).toObject()["memory"].toArray())
        if (row.toObject()["role"].toString() == "gradients" && row.toObject()["source"].toString() == "measured")
            reportedGradients = int64_t(row.toObject()["bytes"].toDouble());
    QCOMPARE(reportedGradients, bytesOf(store.memory(stage2.id, 1), MemoryRole::Gradients, MemorySource::Measured));
    QVERIFY(run["metrics"].toArray().at(5).toObject()["communication_seconds"].toDouble() > 0);
    // The study's export carries every rank too.
    const Result exported = runOptlog({"export", study, "--format", "json"});
    QCOMPARE(exported.exitCode, 0);
    const QJsonArray runs = QJsonDocument::fromJson(exported.out.toUtf8()).object()["runs"].toArray();
    QCOMPARE(runs.size(), 3);
    QCOMPARE(runs.at(2).toObject()["ranks"].toArray().size(), 2);
    QCOMPARE(runs.at(2).toObject()["ranks"].toArray().at(1).toObject()["memory"].toArray().isEmpty(), false);
}

void tst_Distributed::ranksJoinARendezvousGivenByHostAndPort()
{
    const QString port = QString::number(freePort());
    QVERIFY(port != "0");
    const QString study = m_dir.filePath("rendezvous.sqlite");
    QProcess rank0, rank1;
    rank0.start(optlog::testing::optlogBinary(),
                QStringList{"run", "--db", study, "--set", "name=joined", "--rendezvous", "127.0.0.1:" + port, "--rank",
                            "0", "--world-size", "2", "--set", "distributed.ranks=2"}
                    + kSmoke);
    rank1.start(optlog::testing::optlogBinary(),
                {"run", "--rendezvous", "127.0.0.1:" + port, "--rank", "1", "--world-size", "2"});
    const qint64 rank1Pid = rank1.processId();
    QVERIFY(rank0.waitForFinished(120000) && rank1.waitForFinished(120000));
    QVERIFY2(rank0.exitCode() == 0, rank0.readAllStandardError().constData());
    QVERIFY2(rank1.exitCode() == 0, rank1.readAllStandardError().constData());
    const Store store(study.toStdString(), Store::Access::ReadOnly);
    const auto run = store.findRun("joined");
    QVERIFY(run && run->outcome == Outcome::Completed);
    QCOMPARE(store.ranks(run->id).size(), size_t(2));
    QCOMPARE(store.ranks(run->id)[1].pid, int64_t(rank1Pid)); // its report reached rank 0
}

void tst_Distributed::aStopAtRankZeroStopsEveryRankAtOneStep()
{
    const QString study = m_dir.filePath("stop.sqlite");
    QProcess rank0;
    const qint64 rank1 = startLongTwoRankRun(rank0, study, "stopped");
    QVERIFY(rank1 > 0);
    ::kill(pid_t(rank0.processId()), SIGTERM); // rank 0 alone, as the workbench's Cancel
    QVERIFY(rank0.waitForFinished(30000));
    QCOMPARE(rank0.exitCode(), 4);
    QVERIFY(!alive(rank1));
    const Store store(study.toStdString(), Store::Access::ReadOnly);
    const auto run = store.findRun("stopped");
    QVERIFY(run && run->outcome == Outcome::Cancelled);
    const auto ranks = store.ranks(run->id);
    QCOMPARE(ranks.size(), size_t(2));
    for (const RankRecord &rank : ranks)
        QCOMPARE(rank.outcome, std::string("cancelled"));
    QCOMPARE(ranks[0].measuredSteps, ranks[1].measuredSteps);
}

void tst_Distributed::aKilledRankEndsTheRunAsCrashedNamingIt()
{
    const QString study = m_dir.filePath("killed.sqlite");
    QProcess rank0;
    const qint64 rank1 = startLongTwoRankRun(rank0, study, "killed", {"distributed.timeout=20"});
    QVERIFY(rank1 > 0);
    QElapsedTimer timer;
    timer.start();
    ::kill(pid_t(rank1), SIGKILL);
    QVERIFY(rank0.waitForFinished(60000));
    QVERIFY2(timer.elapsed() < 25000, qPrintable(QString::number(timer.elapsed())));
    QCOMPARE(rank0.exitCode(), 1);
    {
        const Store store(study.toStdString(), Store::Access::ReadOnly);
        const auto run = store.findRun("killed");
        QVERIFY(run && run->outcome == Outcome::Crashed);
        QVERIFY2(QString::fromStdString(run->message)
                     .contains("rank 1 (pid " + QString::number(rank1) + ") was killed by signal 9"),
                 run->message.c_str());
        QVERIFY(!store.metrics(run->id).empty()); // what it trained stays
    }
    // A second run into the same study works.
    const RunRecord again = train(study, "again", {"distributed.ranks=2"});
    QVERIFY(again.id > 0 && again.outcome == Outcome::Completed);
}

void tst_Distributed::rankZeroKilledTakesItsRanksWithIt()
{
    const QString study = m_dir.filePath("rank0.sqlite");
    QProcess rank0;
    const qint64 rank1 = startLongTwoRankRun(rank0, study, "orphan");
    QVERIFY(rank1 > 0);
    rank0.kill();
    QVERIFY(rank0.waitForFinished(10000));
    QTRY_VERIFY_WITH_TIMEOUT(!alive(rank1), 10000);
    // The study marks the run crashed when it is next opened.
    const Store store(study.toStdString());
    QVERIFY(store.findRun("orphan")->outcome == Outcome::Crashed);
}

void tst_Distributed::badInputExitsTwoAndWritesNothing_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("message");
    QTest::newRow("--ranks 0") << QStringList{"--ranks", "0"} << "distributed.ranks";
    QTest::newRow("--ranks 65") << QStringList{"--ranks", "65"} << "distributed.ranks";
    QTest::newRow("ZeRO on one rank") << QStringList{"--set", "distributed.zero_stage=1"} << "shards over ranks";
    QTest::newRow("ZeRO stage 3") << QStringList{"--ranks", "2", "--set", "distributed.zero_stage=3"}
                                  << "distributed.zero_stage";
    QTest::newRow("checkpoints over ranks")
        << QStringList{"--ranks", "2", "--set", "train.checkpoint_interval=5"} << "cannot be resumed yet";
    QTest::newRow("rendezvous without a port")
        << QStringList{"--rendezvous", "localhost", "--rank", "0", "--world-size", "2", "--ranks", "2"} << "HOST:PORT";
    QTest::newRow("world size against ranks")
        << QStringList{"--rendezvous", "127.0.0.1:1234", "--rank", "0", "--world-size", "3", "--ranks", "2"}
        << "--world-size 3";
    QTest::newRow("--rank without a rendezvous")
        << QStringList{"--rank", "0", "--world-size", "2", "--ranks", "2"} << "--rendezvous";
    QTest::newRow("--rank on a one-rank run") << QStringList{"--rank", "0"} << "--rendezvous";
    QTest::newRow("a negative rank") << QStringList{"--rank", "-1"} << "--rank";
    QTest::newRow("a world of one") << QStringList{"--rendezvous", "127.0.0.1:1234", "--rank", "0", "--world-size", "1"}
                                    << "--world-size";
}

void tst_Distributed::badInputExitsTwoAndWritesNothing()
{
    QFETCH(QStringList, arguments);
    QFETCH(QString, message);
    const QString study = m_dir.filePath("refused.sqlite");
    const Result r = runOptlog(QStringList{"run", "--db", study} + kSmoke + arguments, 60000);
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains(message), qPrintable(r.err));
    QVERIFY(!QFile::exists(study));
    // A joining rank takes everything from rank 0: a config of its own is refused.
    const Result joining = runOptlog({"run", "--rendezvous", "127.0.0.1:1234", "--rank", "1", "--world-size", "2",
                                      "--preset", "smoke"},
                                     60000);
    QCOMPARE(joining.exitCode, 2);
    QVERIFY(joining.err.contains("take the run from rank 0"));
}

QTEST_GUILESS_MAIN(tst_Distributed)
#include "tst_distributed.moc"
