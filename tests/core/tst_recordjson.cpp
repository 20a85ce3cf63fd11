// SPDX-License-Identifier: MIT
// `optlog export` and the JSON report write each record of a study (run, step metrics, validation,
// memory row, rank) with one serializer and the key names of core/contract/recordkeys.h.
#include "core/analysis/report.h"
#include "core/analysis/studytext.h"
#include "core/contract/recordkeys.h"
#include "core/store/store.h"

#include <nlohmann/json.hpp>

#include <QTemporaryDir>
#include <QtTest>

using namespace optlog;

class tst_RecordJson : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void exportAndReportWriteEachRecordAlike();
};

void tst_RecordJson::exportAndReportWriteEachRecordAlike()
{
    QTemporaryDir dir;
    Store store(dir.filePath("study.sqlite").toStdString());
    RunConfig config;
    config.memory.warmupSteps = 1;
    const int64_t id = store.createRun("fp32", toToml(config), "fp32 group");
    std::vector<StepMetrics> steps(6);
    for (int64_t s = 0; s < 6; ++s)
        steps[s] = {s, (s + 1) * 1000, 3.0 - 0.1 * double(s), 1e-3, 0.5, 0.25, 4000, 0, false, 0, 0.01 * double(s)};
    store.appendMetrics(id, steps);
    store.appendValidation(id, {{5, 6000, 2.5, 32, 0.4}});
    const std::vector<MemoryRow> rank1 = {{MemoryRole::Parameters, "float32", 4096, MemorySource::Measured}};
    store.replaceMemory(id, {{MemoryRole::Peak, "", 65536, MemorySource::Measured}});
    store.replaceMemory(id, rank1, 1);
    store.storeRanks(id, {{0, "host-a", 11, "{\"threads\": 2}", 5, 1.25, 0.05, "completed", ""},
                          {1, "host-b", 12, "", 5, 1.5, 0.25, "completed", ""}});
    store.finishRun(id, Outcome::Completed, 5, "");

    const nlohmann::json exported = nlohmann::json::parse(studyJson(store)).at("runs").at(0);
    const nlohmann::json reported
        = nlohmann::json::parse(reportJson(buildReport(store, {}, "fp32 group", 0.02))).at("runs").at(0);
    for (const char *key :
         {recordkey::kId, recordkey::kName, recordkey::kStatus, recordkey::kOutcome, recordkey::kOutcomeStep,
          recordkey::kCreatedAt, recordkey::kFinishedAt, recordkey::kTags, recordkey::kConfigToml})
        QVERIFY2(exported.at(key) == reported.at(key), key);
    QCOMPARE(exported.at(recordkey::kOutcome).get<std::string>(), std::string("completed"));
    for (const char *records : {"metrics", "validation", "ranks"}) {
        QVERIFY2(exported.at(records) == reported.at(records),
                 (std::string(records) + ": " + exported.at(records).dump() + " vs " + reported.at(records).dump())
                     .c_str());
    }
    // Every field of each, under the contract's names.
    const nlohmann::json &step = exported.at("metrics").at(5);
    QCOMPARE(step.at(recordkey::kLearningRate).get<double>(), 1e-3);
    QCOMPARE(step.at(recordkey::kGradNorm).get<double>(), 0.5);
    QCOMPARE(step.at(recordkey::kCommunicationSeconds).get<double>(), 0.05);
    const nlohmann::json &validation = exported.at("validation").at(0);
    QCOMPARE(validation.at(recordkey::kLoss).get<double>(), 2.5);
    QCOMPARE(validation.at(recordkey::kSequences).get<int64_t>(), int64_t(32));
    QVERIFY(validation.at(recordkey::kSamplingError).get<double>() > 0);
    const nlohmann::json &second = exported.at("ranks").at(1);
    QCOMPARE(second.at(recordkey::kHost).get<std::string>(), std::string("host-b"));
    QCOMPARE(second.at(recordkey::kMemory).at(0).at(recordkey::kBytes).get<int64_t>(), int64_t(4096));
    QCOMPARE(exported.at("ranks").at(0).at(recordkey::kEnvironment).at("threads").get<int>(), 2);
    QCOMPARE(exported.at(recordkey::kMemory).at(0).at(recordkey::kRole).get<std::string>(), std::string("peak"));
}

QTEST_APPLESS_MAIN(tst_RecordJson)
#include "tst_recordjson.moc"
