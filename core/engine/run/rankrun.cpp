// SPDX-License-Identifier: MIT
#include "core/engine/run/rankrun.h"

#include "core/contract/thismachine.h"
#include "core/engine/data/textdata.h"
#include "core/engine/machine/device.h"
#include "core/engine/machine/environment.h"
#include "core/engine/memory/countingallocator.h"
#include "core/engine/train/ending.h"
#include "core/engine/train/trainer.h"

#include <nlohmann/json.hpp>

#include <iostream>

#include <unistd.h>

namespace optlog {

namespace {

constexpr const char *kConfigKey = "optlog/config";
constexpr const char *kStudySeedKey = "optlog/study_seed";
std::string reportKey(int64_t rank)
{
    return "optlog/report/" + std::to_string(rank);
}

} // namespace

void publishRunForRanks(RankGroup &ranks, const RunConfig &config, uint64_t studySeed)
{
    ranks.publish(kConfigKey, toToml(config));
    ranks.publish(kStudySeedKey, std::to_string(studySeed));
}

RankReport readRankReport(RankGroup &ranks, int64_t rank, bool completed)
{
    RankReport report;
    report.record.rank = rank;
    const auto wait = completed ? std::chrono::milliseconds(ranks.timeout()) : std::chrono::milliseconds(2000);
    if (!ranks.wait(reportKey(rank), wait)) {
        report.record.outcome = outcomeName(Outcome::Crashed);
        report.record.message = "rank " + std::to_string(rank) + " sent no report";
        return report;
    }
    try {
        const nlohmann::json json = nlohmann::json::parse(ranks.read(reportKey(rank)));
        auto &r = report.record;
        r.host = json.at("host").get<std::string>();
        r.pid = json.at("pid").get<int64_t>();
        r.environmentJson = json.at("environment").dump();
        r.measuredSteps = json.at("measured_steps").get<int64_t>();
        r.stepSeconds = json.at("step_seconds").get<double>();
        r.communicationSeconds = json.at("communication_seconds").get<double>();
        r.outcome = json.at("outcome").get<std::string>();
        r.message = json.at("message").get<std::string>();
        for (const auto &row : json.at("memory")) {
            const auto role = memoryRoleNamed(row.at("role").get<std::string>());
            if (role)
                report.measuredMemory.push_back({*role, row.at("dtype").get<std::string>(),
                                                 row.at("bytes").get<int64_t>(), MemorySource::Measured});
        }
    } catch (const nlohmann::json::exception &e) {
        report.record.outcome = outcomeName(Outcome::Failed);
        report.record.message = std::string("rank ") + std::to_string(rank)
                                + " sent a report optlog cannot read: " + e.what();
    }
    return report;
}

namespace {

class SilentObserver : public TrainingObserver
{ };

} // namespace

Outcome runRank(RankGroup &ranks, const std::atomic<bool> &stopRequested)
{
    const RunConfig config = loadDerivedConfig(ranks.read(kConfigKey), "rank 0's run", {});
    const uint64_t studySeed = std::stoull(ranks.read(kStudySeedKey));
    ranks.setTimeout(std::chrono::seconds(config.distributed.timeout));
    const TokenSplit data = loadTokens(config.data, config.model.vocabSize, config.model.contextLength);
    const nlohmann::json heap = keepTensorMemoryInHeap();
    CountingAllocator::install();
    const ThreadSettings threads = applyThreadSettings(config.runtime);
    if (!config.memory.budget.empty())
        CountingAllocator::instance().setBudget(parseBytes(config.memory.budget, "memory.budget"));

    TrainingOutcome outcome;
    try {
        ranks.connect(runDevice(config).is_cuda());
        Trainer trainer(config, data, studySeed, &ranks);
        SilentObserver silent;
        outcome = trainer.run(silent, stopRequested);
    } catch (const std::exception &e) {
        outcome = outcomeOfException(e, {-1, config.runtime.device, {}, {}}); // rank 0 knows the step
    }
    CountingAllocator::instance().setBudget(0);
    nlohmann::json report = {{"host", thisMachine()},
                             {"pid", int64_t(getpid())},
                             {"environment", captureEnvironment(threads, heap)},
                             {"measured_steps", outcome.measuredSteps},
                             {"step_seconds", outcome.stepSeconds},
                             {"communication_seconds", outcome.communicationSeconds},
                             {"outcome", outcomeName(outcome.outcome)},
                             {"message", outcome.message},
                             {"memory", nlohmann::json::array()}};
    for (const MemoryRow &row : outcome.measuredMemory)
        report["memory"].push_back({{"role", memoryRoleName(row.role)}, {"dtype", row.dtype}, {"bytes", row.bytes}});
    try {
        ranks.publish(reportKey(ranks.rank()), report.dump());
    } catch (const std::exception &e) {
        std::cerr << "optlog run: rank " << ranks.rank() << " could not report to rank 0: " << e.what() << "\n";
    }
    if (outcome.outcome != Outcome::Completed && !outcome.message.empty())
        std::cerr << "optlog run: rank " << ranks.rank() << " " << outcomeName(outcome.outcome) << ": "
                  << outcome.message << "\n";
    return outcome.outcome;
}

} // namespace optlog
