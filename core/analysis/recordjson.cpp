// SPDX-License-Identifier: MIT
#include "core/analysis/recordjson_p.h"
#include "core/contract/memoryroles.h"
#include "core/contract/recordkeys.h"

#include <cmath>

namespace optlog {

namespace k = recordkey;

namespace {

// Unknown (NaN) and infinite values as null: JSON has neither.
nlohmann::json finite(double v)
{
    return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

// A JSON text stored with a record, parsed; null where there is none.
nlohmann::json storedJson(const std::string &text)
{
    return nlohmann::json::parse(text.empty() ? "null" : text, nullptr, false);
}

} // namespace

nlohmann::json runRecordJson(const RunRecord &run, const std::string &derivedFrom)
{
    return {{k::kId, run.id},
            {k::kName, run.name},
            {k::kGroup, run.group},
            {k::kStatus, run.isFinished() ? "finished" : "running"},
            {k::kOutcome, outcomeName(run.outcome)},
            {k::kOutcomeStep, run.outcomeStep},
            {k::kMessage, run.message},
            {k::kCreatedAt, run.createdAt},
            {k::kFinishedAt, run.finishedAt},
            {k::kNote, run.note},
            {k::kTags, run.tags},
            {k::kFormerNames, run.formerNames},
            {k::kArchived, run.archived},
            {k::kDerivedFrom, derivedFrom},
            {k::kValidationSeed, run.validationSeed},
            {k::kConfigToml, run.configToml}};
}

nlohmann::json metricJson(const StepMetrics &m)
{
    nlohmann::json out = {{k::kStep, m.step},
                          {k::kTokens, m.tokens},
                          {k::kTrainLoss, finite(m.trainLoss)},
                          {k::kLearningRate, m.learningRate},
                          {k::kGradNorm, finite(m.gradNorm)},
                          {k::kStepSeconds, m.stepSeconds},
                          {k::kTokensPerSecond, m.tokensPerSecond}};
    if (m.communicationSeconds) // data parallel: rank 0's seconds in collectives, within the step's
        out[k::kCommunicationSeconds] = *m.communicationSeconds;
    return out;
}

nlohmann::json validationJson(const ValidationPoint &v)
{
    return {{k::kStep, v.step},
            {k::kTokens, v.tokens},
            {k::kLoss, finite(v.loss)},
            {k::kSequences, v.sequences},
            {k::kSequenceSd, v.sequenceSd},
            {k::kSamplingError, finite(v.samplingError())}};
}

nlohmann::json memoryRowJson(const MemoryRow &row)
{
    return {{k::kRole, memoryRoleName(row.role)},
            {k::kDtype, row.dtype},
            {k::kBytes, row.bytes},
            {k::kSource, memorySourceName(row.source)}};
}

nlohmann::json timelinesJson(const std::vector<MemoryTimeline> &timelines)
{
    nlohmann::json out = nlohmann::json::array();
    for (const MemoryTimeline &timeline : timelines)
        out.push_back(timelineToJson(timeline));
    return out;
}

nlohmann::json rankJson(const RankRecord &rank, const std::vector<MemoryRow> &memory)
{
    nlohmann::json rows = nlohmann::json::array();
    for (const auto &row : memory)
        rows.push_back(memoryRowJson(row));
    return {{k::kRank, rank.rank},
            {k::kHost, rank.host},
            {k::kPid, rank.pid},
            {k::kOutcome, rank.outcome},
            {k::kMessage, rank.message},
            {k::kMeasuredSteps, rank.measuredSteps},
            {k::kStepSeconds, rank.stepSeconds},
            {k::kCommunicationSeconds, rank.communicationSeconds},
            {k::kEnvironment, storedJson(rank.environmentJson)},
            {k::kMemory, rows}};
}

} // namespace optlog
