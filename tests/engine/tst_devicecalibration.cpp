// SPDX-License-Identifier: MIT
// The memory model's device calibration on a real engine: the counting allocator made to count as
// a GPU's does by known amounts (its test hook), the built-in GPT probed, the correction fitted,
// cached, refused when stale, and judged on a run it was not fitted to.
#include "core/config/config.h"
#include "core/engine/data/textdata.h"
#include "core/engine/machine/device.h"
#include "core/engine/memory/countingallocator.h"
#include "core/engine/run/memoryprobe.h"
#include "core/memorymodel/devicecalibration.h"

#include <nlohmann/json.hpp>

#include <QTemporaryDir>
#include <QtTest>
#include <fstream>

using namespace optlog;

class tst_DeviceCalibration : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_cache.isValid());
        qputenv("XDG_CACHE_HOME", m_cache.path().toUtf8());
        // 10% more per block (a caching allocator's rounding, exaggerated) and 8 MiB held from
        // the first backward on (a product library's workspace): before anything installs the
        // allocator, which reads it once.
        qputenv("OPTLOG_TEST_ALLOCATOR_OVERCOUNT", "0.1,8MiB");
        m_device = deviceTermsOf(m_config);
        QVERIFY2(m_device.chip.find("test hook: counts 10% more, holds 8.0 MiB") != std::string::npos,
                 m_device.chip.c_str());
    }

    void anOvercountingDeviceIsCorrected()
    {
        const DeviceCalibration calibration = calibrateDevice(m_config, m_device);
        QVERIFY(!calibration.fromCache);
        QVERIFY2(calibration.applied, calibration.describe().c_str());
        QVERIFY(calibration.heldOutErrorBefore > 0.08);
        QVERIFY2(calibration.heldOutErrorAfter < 0.02, calibration.describe().c_str());
        // Judged on a run it was not fitted to: the default preset's model, larger than any probe's,
        // at its own microbatch and context, measured by three real steps on the hooked allocator.
        const TokenSplit data = loadTokens(m_config.data, m_config.model.vocabSize, m_config.model.contextLength);
        const int64_t B = m_config.train.microbatch, T = m_config.model.contextLength;
        const MemoryProbe measured = measureShortRun(m_config, data, B, T);
        const MemoryEstimate plain = estimateMemory(shortRunConfig(m_config, B, T), m_device);
        const MemoryEstimate corrected = calibrated(plain, calibration);
        const auto error = [&measured](const MemoryEstimate &e) {
            return std::abs(double(e.peakBytes - measured.peak)) / double(measured.peak);
        };
        qInfo("default preset's peak under the hook: measured %lld, model %lld (%.1f%% off), calibrated %lld "
              "(%.1f%% off)",
              (long long) measured.peak, (long long) plain.peakBytes, 100 * error(plain),
              (long long) corrected.peakBytes, 100 * error(corrected));
        QVERIFY(error(plain) > 0.08);
        QVERIFY2(error(corrected) < 0.02, corrected.calibration.c_str());
        QVERIFY(corrected.calibration.find("calibrated on cpu") == 0);
    }

    void theCalibrationIsCachedAndAStaleOneRefused()
    {
        const DeviceCalibration cached = calibrateDevice(m_config, m_device);
        QVERIFY(cached.fromCache);
        QCOMPARE(cached.seconds, 0.0);
        const std::string path = m_cache.filePath("optlog/device-calibration.json").toStdString();
        nlohmann::json file;
        std::ifstream(path) >> file;
        QVERIFY(file.contains(cached.key()));
        // Fitted against another revision of the memory model: refused, and probed again.
        file[cached.key()]["model_revision"] = kMemoryModelRevision - 1;
        std::ofstream(path) << file.dump();
        std::string refusal;
        QVERIFY(!readCachedCalibration(cached.device, cached.precisionMode, cached.environment, &refusal));
        QVERIFY2(refusal.find("stale: fitted to revision") == 0, refusal.c_str());
        // Probed under other workspace variables: refused as well.
        QVERIFY(!readCachedCalibration(cached.device, cached.precisionMode, "CUBLAS_WORKSPACE_CONFIG=:16:8", &refusal));
        const DeviceCalibration again = calibrateDevice(m_config, m_device);
        QVERIFY(!again.fromCache);
        QVERIFY(calibrateDevice(m_config, m_device).fromCache);
    }

    void theProbeCostIsBounded()
    {
        RunConfig other = m_config;
        other.precision.mode = "autocast-bf16"; // not probed yet: another entry
        const DeviceCalibration calibration = calibrateDevice(other, m_device);
        QVERIFY(!calibration.fromCache);
        QCOMPARE(calibration.probes.size(), std::size(kCalibrationShapes));
        // The work is fixed whatever the run: seven shapes of a 2-layer GPT up to width 256, three
        // steps each, 18,816 tokens in all (the seconds it took are in the cache; under a second on
        // a 2-core AMD EPYC).
        QCOMPARE(calibration.probeTokens, int64_t(3 * (32 + 128 + 256 + 512 + 128 + 512 + 1024)));
        QVERIFY(calibration.seconds > 0);
        qInfo("probed in %.2f s", calibration.seconds);
    }

private:
    QTemporaryDir m_cache;
    RunConfig m_config = loadRunConfig("default", "", {"train.steps=10"});
    DeviceTerms m_device;
};

QTEST_APPLESS_MAIN(tst_DeviceCalibration)
#include "tst_devicecalibration.moc"
