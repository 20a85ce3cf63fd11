// SPDX-License-Identifier: MIT
// A machine that is busy while optlog measures it: busy loops (bash, one per CPU, ended by the
// test and by their own time limit) hold the cores while the real `optlog` measures its matmul peak
// and tunes. What a busy machine gave is used by that run alone and never cached; measured again
// quietly, the peak is cached (docs/measurement.md, "busy"). The memory model's device calibration
// measures bytes, the same busy or quiet. Run alone (RUN_SERIAL): under ctest -j2 the other tests
// would make the quiet half busy too.
#include "core/store/store.h"
#include "tests/common/enginebinary.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>
#include <optional>
#include <thread>

using optlog::testing::Result;
using optlog::testing::runOptlog;

namespace {

// One `while :` loop per logical CPU, each ending by itself after `seconds` at the latest.
class BusyLoops
{
public:
    explicit BusyLoops(int seconds)
    {
        for (unsigned i = 0; i < std::max(1u, std::thread::hardware_concurrency()); ++i) {
            auto *loop = new QProcess;
            loop->start("bash",
                        {"-c", QString("end=$((SECONDS + %1)); while ((SECONDS < end)); do :; done").arg(seconds)});
            loop->waitForStarted();
            m_loops.append(loop);
        }
    }
    ~BusyLoops()
    {
        for (QProcess *loop : m_loops) {
            loop->kill();
            loop->waitForFinished();
            delete loop;
        }
    }

private:
    QList<QProcess *> m_loops;
};

// The matmul peaks cached under `cache`, as the file holds them.
QJsonObject cachedPeaks(const QString &cache)
{
    QFile file(cache + "/optlog/matmul-peak.json");
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(file.readAll()).object();
}

} // namespace

class tst_BusyMachine : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void aPeakMeasuredOnABusyMachineIsThisRunsAndNotKept();
    void aTuningOnABusyMachineKeepsNothing();
    void aDeviceCalibrationIsBytesThatABusyMachineDoesNotChange();

private:
    // A user's environment (busy measurements not kept), its caches in `cache`.
    QProcessEnvironment userEnvironment(const QString &cache) const;

    QTemporaryDir m_dir;
};

void tst_BusyMachine::initTestCase()
{
    QVERIFY(m_dir.isValid());
}

QProcessEnvironment tst_BusyMachine::userEnvironment(const QString &cache) const
{
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.remove("OPTLOG_BUSY_SHARE");          // the suite keeps every measurement; a user's optlog does not
    environment.insert("OMP_WAIT_POLICY", "PASSIVE"); // one cache key for every measurement below
    environment.insert("XDG_CACHE_HOME", cache);
    return environment;
}

void tst_BusyMachine::aPeakMeasuredOnABusyMachineIsThisRunsAndNotKept()
{
    const QString cache = m_dir.filePath("peak-cache");
    const QProcessEnvironment environment = userEnvironment(cache);
    const QString study = m_dir.filePath("busy.sqlite");
    {
        const BusyLoops loops(300);
        const Result peak = runOptlog({"tune", "--peak-only", "--threads", "1"}, 600000, environment);
        QVERIFY2(peak.exitCode == 0, qPrintable(peak.err));
        QVERIFY2(peak.out.contains("The machine was busy (other processes took")
                     && peak.out.contains("this peak is not kept"),
                 qPrintable(peak.out));
        QCOMPARE(cachedPeaks(cache).size(), 0);

        // A run measures its own, says so in one line and in its environment, and keeps nothing.
        const Result run = runOptlog({"run", "--db", study, "--preset", "smoke", "--set", "data.corpus=generated",
                                      "--set", "train.steps=5", "--set", "runtime.threads=1"},
                                     600000, environment);
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        QVERIFY2(run.err.contains("optlog: the machine was busy while its matmul peak was measured (other processes "
                                  "took"),
                 qPrintable(run.err));
        QCOMPARE(cachedPeaks(cache).size(), 0);
        const optlog::Store store(study.toStdString(), optlog::Store::Access::ReadOnly);
        const QJsonObject environmentRecord
            = QJsonDocument::fromJson(QByteArray::fromStdString(store.runs().front().environmentJson)).object();
        const QJsonObject runPeak = environmentRecord["matmul_peak"].toObject();
        QVERIFY2(runPeak["busy"].toString().startsWith("other processes took"),
                 qPrintable(QJsonDocument(runPeak).toJson()));
        QVERIFY(runPeak["float32_gflops"].toDouble() > 0); // its MFU is judged against it
    }
    // Quiet again: measured once and kept.
    const Result quiet = runOptlog({"tune", "--peak-only", "--threads", "1"}, 600000, environment);
    QVERIFY2(quiet.exitCode == 0, qPrintable(quiet.err));
    QVERIFY2(!quiet.out.contains("busy"), qPrintable(quiet.out));
    QCOMPARE(cachedPeaks(cache).size(), 1);
    const Result again = runOptlog({"tune", "--peak-only", "--threads", "1"}, 600000, environment);
    QVERIFY2(again.out.contains("from the cache"), qPrintable(again.out));
}

void tst_BusyMachine::aTuningOnABusyMachineKeepsNothing()
{
    const QString cache = m_dir.filePath("tuning-cache");
    const QProcessEnvironment environment = userEnvironment(cache);
    const BusyLoops loops(300);
    const Result tune = runOptlog({"tune", "--quick", "--modes", "fp32"}, 900000, environment);
    QVERIFY2(tune.exitCode == 0, qPrintable(tune.err));
    QVERIFY2(tune.out.contains("optlog tune: the machine was busy while the candidates ran (other processes took")
                 && tune.out.contains("nothing is kept for fp32"),
             qPrintable(tune.out));
    QVERIFY2(!tune.out.contains("saved in"), qPrintable(tune.out));
    const Result status = runOptlog({"tune", "--status"}, 60000, environment);
    QVERIFY2(status.out.contains("fp32: not tuned on this machine"), qPrintable(status.out));
}

// The memory model's device calibration is kept however busy the machine was: it measures the
// bytes of short runs' tensors, which a neighbour does not change. Calibrated busy and quiet, each
// into a cache of its own, its probes are the same to the byte.
void tst_BusyMachine::aDeviceCalibrationIsBytesThatABusyMachineDoesNotChange()
{
    const auto probes = [this](const QString &name, bool busy) {
        const QProcessEnvironment environment = userEnvironment(m_dir.filePath(name));
        std::optional<BusyLoops> loops;
        if (busy)
            loops.emplace(300);
        const Result estimated = runOptlog({"estimate", "--preset", "smoke"}, 600000, environment);
        if (estimated.exitCode != 0)
            return QJsonArray{QJsonValue(estimated.err)};
        QFile file(m_dir.filePath(name) + "/optlog/device-calibration.json");
        if (!file.open(QIODevice::ReadOnly))
            return QJsonArray{QJsonValue("no calibration cached")};
        const QJsonObject cache = QJsonDocument::fromJson(file.readAll()).object();
        return cache.isEmpty() ? QJsonArray{} : cache.begin()->toObject()["probes"].toArray();
    };
    const QJsonArray busy = probes("busy-calibration", true), quiet = probes("quiet-calibration", false);
    QVERIFY2(busy.size() >= 3, qPrintable(QJsonDocument(busy).toJson()));
    QCOMPARE(busy, quiet);
}

QTEST_GUILESS_MAIN(tst_BusyMachine)
#include "tst_busymachine.moc"
