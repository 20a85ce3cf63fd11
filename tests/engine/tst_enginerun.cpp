// SPDX-License-Identifier: MIT
// One run of the engine into a real study file: what it refuses before writing, and what it stores.
#include "core/config/config.h"
#include "core/config/studyplan.h"
#include "core/engine/run/enginerun.h"
#include "core/engine/run/preflight.h"
#include "core/store/store.h"
#include "tests/common/files.h"

#include <ATen/Parallel.h>
#include <nlohmann/json.hpp>

#include <QtTest>
#include <cmath>
#include <map>

using namespace optlog;

namespace {

RunConfig smoke(const std::vector<std::string> &overrides = {})
{
    std::vector<std::string> all = {"data.corpus=generated", "train.steps=12", "train.eval_interval=6",
                                    "runtime.threads=1", "name=\"smoke run\""};
    all.insert(all.end(), overrides.begin(), overrides.end());
    return loadRunConfig("smoke", "", all);
}

bool hasRow(const std::vector<MemoryRow> &rows, MemoryRole role, MemorySource source)
{
    return std::any_of(rows.begin(), rows.end(),
                       [&](const MemoryRow &r) { return r.role == role && r.source == source; });
}

} // namespace

class tst_EngineRun : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void trainsIntoTheStudyWithWhatAComparisonNeeds()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath("study.sqlite").toStdString();
        EngineRun run(smoke());
        run.open(path);
        const std::atomic<bool> stop{false};
        const EngineRun::Result result = run.train({}, stop);
        QCOMPARE(std::string(outcomeName(result.outcome.outcome)), std::string("completed"));

        const Store store(path, Store::Access::ReadOnly);
        const RunRecord record = *store.findRun(std::to_string(result.runId));
        QCOMPARE(record.name, std::string("smoke run"));
        QCOMPARE(std::string(outcomeName(record.outcome)), std::string("completed"));
        QCOMPARE(record.outcomeStep, int64_t(11));
        QCOMPARE(store.metrics(record.id).size(), size_t(12));
        QCOMPARE(store.validation(record.id).size(), size_t(2));
        const auto memory = store.memory(record.id);
        QVERIFY(hasRow(memory, MemoryRole::Peak, MemorySource::Predicted));
        QVERIFY(hasRow(memory, MemoryRole::Peak, MemorySource::Measured));
        QVERIFY(hasRow(memory, MemoryRole::SavedActivations, MemorySource::Measured));
        QVERIFY2(record.dtypesJson.find(R"("weights":"float32")") != std::string::npos, record.dtypesJson.c_str());
        QVERIFY2(record.environmentJson.find("matmul_peak") != std::string::npos, record.environmentJson.c_str());
        QVERIFY2(record.environmentJson.find(R"("device":"cpu")") != std::string::npos, record.environmentJson.c_str());
        const auto events = store.events(record.id);
        QVERIFY(!events.empty());
        QCOMPARE(events.front().kind, EventKind::Started);
        QVERIFY2(events.front().message.find("data: ") != std::string::npos, events.front().message.c_str());
    }

    void aRunToldToMeasureNoMatmulPeakStoresWhyAndCachesNone()
    {
        QTemporaryDir dir;
        const QByteArray previousCache = qgetenv("XDG_CACHE_HOME");
        qputenv("XDG_CACHE_HOME", dir.filePath("cache").toUtf8());
        qputenv("OPTLOG_MATMUL_PEAK", "0");
        const std::string path = dir.filePath("study.sqlite").toStdString();
        EngineRun run(smoke({"train.steps=6", "train.eval_interval=3"}));
        run.open(path);
        const std::atomic<bool> stop{false};
        const EngineRun::Result result = run.train({}, stop);
        qunsetenv("OPTLOG_MATMUL_PEAK");
        qputenv("XDG_CACHE_HOME", previousCache);

        QCOMPARE(std::string(outcomeName(result.outcome.outcome)), std::string("completed"));
        const Store store(path, Store::Access::ReadOnly);
        const std::string environment = store.findRun(std::to_string(result.runId))->environmentJson;
        QVERIFY2(environment.find(R"("matmul_peak":{"not_measured":"OPTLOG_MATMUL_PEAK=0"})") != std::string::npos,
                 environment.c_str());
        QVERIFY(!QFileInfo::exists(dir.filePath("cache/optlog/matmul-peak.json")));
    }

    void replicatesTrainAsOneGroupOnTheSameValidationWindows()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath("study.sqlite").toStdString();
        PlannedRun planned;
        planned.name = "smoke";
        planned.preset = "smoke";
        planned.overrides = {"data.corpus=generated",     "train.steps=12",
                             "train.eval_interval=12",    "runtime.threads=1",
                             "diagnostics.numerics=true", "diagnostics.numerics_every=6"};
        planned.repeats = 2;
        std::vector<double> firstLosses, validationLosses;
        for (const PlannedRun &replicate : replicatesOf(planned)) {
            EngineRun run(replicate.config());
            run.open(path);
            const std::atomic<bool> stop{false};
            QCOMPARE(run.train({}, stop).outcome.outcome, Outcome::Completed);
        }
        const Store store(path, Store::Access::ReadOnly);
        const auto runs = store.runs();
        QCOMPARE(runs.size(), size_t(2));
        for (const auto &run : runs) {
            QCOMPARE(run.group, std::string("smoke"));
            firstLosses.push_back(store.metrics(run.id).front().trainLoss);
            const auto validation = store.validation(run.id);
            QCOMPARE(validation.size(), size_t(1));
            validationLosses.push_back(validation.front().loss);
            // The validation set's own spread, so that its sampling error is known for one run.
            QVERIFY(validation.front().sequences > 1);
            QVERIFY(validation.front().sequenceSd > 0 && std::isfinite(validation.front().samplingError()));
            // Numerics at steps 5 and 11: per parameter and per block.
            const auto numerics = store.numerics(run.id);
            QVERIFY(!numerics.empty());
            QCOMPARE(numerics.front().step, int64_t(5));
            QCOMPARE(numerics.back().step, int64_t(11));
            QVERIFY(std::any_of(numerics.begin(), numerics.end(), [](const TensorNumerics &n) {
                return n.tensor == "blocks.0" && n.activationMax > 0 && n.activationMax < 65504;
            }));
            QVERIFY(std::any_of(numerics.begin(), numerics.end(), [](const TensorNumerics &n) {
                return n.tensor == "blocks.0.mlp.fc.weight" && n.fp16Underflow >= 0 && n.vanishingUpdates >= 0;
            }));
        }
        // Different seeds: different initial weights and batches, so a different first loss.
        QVERIFY(firstLosses[0] != firstLosses[1]);
        QVERIFY(validationLosses[0] != validationLosses[1]);
    }

    void refusesBadInputBeforeAnyFileExists()
    {
        QTemporaryDir dir;
        const QString study = dir.filePath("study.sqlite");
        QVERIFY_EXCEPTION_THROWN(EngineRun(smoke({"data.corpus=text",
                                                  "data.path=\"" + dir.filePath("none.txt").toStdString() + "\""})),
                                 DataError);
        RunConfig fp16 = smoke();
        fp16.precision.mode = "master-fp16"; // changed after the config's own rules ran
        QVERIFY_EXCEPTION_THROWN(EngineRun{fp16}, ConfigError);
        QVERIFY(!QFile::exists(study));
    }

    void refusesAFileThatIsNotAStudyAndLeavesIt()
    {
        QTemporaryDir dir;
        const QString path = testing::writtenFile(dir, "notes.sqlite", "my notes, not a study");
        EngineRun run(smoke());
        QVERIFY_EXCEPTION_THROWN(run.open(path.toStdString()), StoreError);
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(file.readAll(), QByteArray("my notes, not a study"));
    }

    void aRefusedAllocationEndsTheRunAsOomWithWhatWasRefused()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath("study.sqlite").toStdString();
        EngineRun run(smoke({"memory.budget=\"600KiB\""}), EngineRun::PreflightCheck::Force);
        run.open(path);
        const std::atomic<bool> stop{false};
        const EngineRun::Result result = run.train({}, stop);
        QCOMPARE(std::string(outcomeName(result.outcome.outcome)), std::string("oom"));
        const Store store(path, Store::Access::ReadOnly);
        bool refusal = false;
        for (const auto &e : store.events(result.runId))
            refusal = refusal
                      || (e.kind == EventKind::Oom && e.message.find(R"("budget_bytes":614400)") != std::string::npos);
        QVERIFY(refusal);
        QCOMPARE(std::string(outcomeName(store.runs().front().outcome)), std::string("oom"));
    }

    // On a GPU the host runs ahead of the device until it reads a value: the loop waits only to
    // read its step metrics (every runtime.metrics_every steps, and before a validation), its
    // validation loss and the final weights. The CPU makes the same reads at the same places, so
    // their count here is the GPU's; reading later changes nothing that is trained.
    void theLoopWaitsForItsDeviceOnlyToReadItsMetrics()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath("study.sqlite").toStdString();
        const std::atomic<bool> stop{false};
        std::map<int, std::vector<double>> losses;
        std::map<int, nlohmann::json> syncs;
        for (const int every : {1, 6}) {
            // Clipping on every step (grad_clip 0.05) exercises the gate's factor too.
            EngineRun run(smoke({"train.steps=24", "train.eval_interval=12", "train.grad_clip=0.05",
                                 "runtime.speed_probe_every=0", "runtime.metrics_every=" + std::to_string(every),
                                 "name=\"every " + std::to_string(every) + "\""}));
            run.open(path);
            const EngineRun::Result result = run.train({}, stop);
            QCOMPARE(result.outcome.outcome, Outcome::Completed);
            const Store store(path, Store::Access::ReadOnly);
            for (const auto &m : store.metrics(result.runId))
                losses[every].push_back(m.trainLoss);
            syncs[every] = nlohmann::json::parse(store.findRun(std::to_string(result.runId))->environmentJson)
                               .at("host_syncs");
        }
        QCOMPARE(losses[6].size(), size_t(24)); // every step recorded
        QVERIFY(losses[6] == losses[1]);        // bitwise the same training
        const auto expected = [](int metricReads) {
            return nlohmann::json{{"step_metrics", metricReads}, {"validation", 2}, {"weights", 1}};
        };
        QCOMPARE(QString::fromStdString(syncs[1].dump()), QString::fromStdString(expected(24).dump()));
        // Every 6th step, and at the end of warm-up (step 3), so that its time stays out of the measured steps.
        QCOMPARE(QString::fromStdString(syncs[6].dump()), QString::fromStdString(expected(5).dump()));
    }

    // FP32 products in TF32 are a GPU's: on the CPU the setting is refused before anything is
    // written, with the reason; what a run used is stored with it.
    void tf32IsRefusedOnTheCpuAndStoredWithTheRun()
    {
        try {
            EngineRun run(smoke({"precision.tf32=true"}));
            QFAIL("precision.tf32 = true was accepted on the CPU");
        } catch (const ConfigError &e) {
            QCOMPARE(e.field(), std::string("precision.tf32"));
            QVERIFY2(std::string(e.what()).find("tensor cores") != std::string::npos, e.what());
        }
        QTemporaryDir dir;
        const std::string path = dir.filePath("study.sqlite").toStdString();
        EngineRun run(smoke({"train.steps=4", "memory.attention=auto"}));
        run.open(path);
        const std::atomic<bool> stop{false};
        const EngineRun::Result result = run.train({}, stop);
        const Store store(path, Store::Access::ReadOnly);
        const auto environment = nlohmann::json::parse(store.findRun(std::to_string(result.runId))->environmentJson);
        QCOMPARE(environment.at("tf32").get<bool>(), false);
        QCOMPARE(environment.at("attention").get<std::string>(), std::string("naive")); // "auto" on the CPU
    }

    // A run whose least time at this machine's measured peak is over a day is refused before it
    // trains, saying how long; an hour or more trains with a warning saying so.
    void aRunOfHoursSaysSoAndOneOfDaysIsRefused()
    {
        const RunConfig config = loadRunConfig("gpt2-small", "", {});
        // 86 M parameters, 12,288 tokens a step: 7.7 TFLOP a step.
        const double flops = 6.0 * 86039040 + 12.0 * 12 * 1024 * 768;
        QVERIFY(std::fabs(*leastSeconds(config, 100) - flops * 12288 * 300 / 100e9) < 1);
        QVERIFY(!checkTimeFits(loadRunConfig("smoke", "", {}), 100, false));
        const auto warning = checkTimeFits(config, 100, false); // at 100 GFLOP/s: 6.4 hours
        QVERIFY(warning);
        QVERIFY2(warning->find("at least 6.4 hours") != std::string::npos, warning->c_str());
        RunConfig longer = config;
        longer.train.steps = 3000;
        QVERIFY(checkTimeFits(longer, 100, true)); // forced: a warning
        try {
            checkTimeFits(longer, 100, false);
            QFAIL("a run of 64 hours was not refused");
        } catch (const ConfigError &e) {
            QCOMPARE(e.field(), std::string("train.steps"));
            QVERIFY2(std::string(e.what()).find("at least 64.5") != std::string::npos, e.what());
            QVERIFY2(std::string(e.what()).find("--force") != std::string::npos, e.what());
        }
    }
};

QTEST_APPLESS_MAIN(tst_EngineRun)
#include "tst_enginerun.moc"
