// SPDX-License-Identifier: MIT
// reportJson(): the report for programs, every step's metrics included.
#include "core/analysis/decisionwords.h"
#include "core/analysis/recordjson_p.h"
#include "core/analysis/report.h"
#include "core/analysis/verdictcells.h"

#include <nlohmann/json.hpp>

#include <cmath>

namespace optlog {

namespace {

nlohmann::json finite(double v)
{
    return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

// One group's verdict with the numbers behind it.
nlohmann::json groupJson(const ComparisonRow &c, double tolerance)
{
    nlohmann::json instabilities = nlohmann::json::object();
    for (const auto &[kind, count] : c.instabilities)
        instabilities[eventKindName(kind)] = count;
    return {{"name", c.name},
            {"baseline", isBaseline(c)},
            {"seeds", c.seeds},
            {"completed", c.completed},
            {"outcome", outcomeName(c.outcome)},
            {"matched_tokens", c.matchedTokens},
            {"validation_loss",
             {{"mean", finite(c.validationLoss)},
              {"sd_over_seeds", c.validationSd},
              {"sampling_error", finite(c.samplingError)}}},
            {"delta_loss",
             {{"difference", finite(c.deltaLoss)},
              {"half_width_95", finite(c.quality.halfWidth)},
              {"interval", c.quality.seedNoiseKnown() ? "welch" : "none: one seed on a side"}}},
            {"tolerance", tolerance},
            {"speedup", c.speedup},
            {"speedup_interval_95",
             {{"low", c.speedupInterval.min},
              {"high", c.speedupInterval.max},
              {"over", c.speedupInterval.max <= 0 ? "none"
                       : c.speedOverSeeds         ? "seeds"
                                                  : "blocks of steps"}}},
            {"speed", isBaseline(c) ? kBaselineWord : speedCallName(c.speedCall)},
            {"tokens_per_second",
             {{"median", c.tokensPerSecond.median}, {"min", c.tokensPerSecond.min}, {"max", c.tokensPerSecond.max}}},
            {"mfu", c.mfu},
            {"peak_bytes", {{"median", c.peakBytes}, {"min", int64_t(c.peak.min)}, {"max", int64_t(c.peak.max)}}},
            {"memory_saved", c.memorySaved},
            {"memory", isBaseline(c) ? kBaselineWord : memoryCallName(c.memoryCall)},
            {"instabilities", instabilities},
            {"numerics", c.numerics},
            {"verdict", verdictCells(c, tolerance)[VerdictColumn::Verdict]}};
}

// What quantizing the run's final weights measured, scheme by scheme.
nlohmann::json quantizationsJson(const std::vector<QuantizationResult> &results)
{
    nlohmann::json quantizations = nlohmann::json::array();
    for (const QuantizationResult &q : results) {
        nlohmann::json sensitivity = nlohmann::json::array();
        for (const TensorSensitivity &t : q.sensitivity)
            sensitivity.push_back({{"tensor", t.tensor}, {"loss_delta", finite(t.lossDelta)}});
        quantizations.push_back({{"scheme", q.scheme},
                                 {"group_size", q.groupSize},
                                 {"tensors", q.tensors},
                                 {"int8_tensors", q.int8Tensors},
                                 {"bits_per_weight", q.bitsPerWeight()},
                                 {"quantized_weights", q.quantizedWeights},
                                 {"total_weights", q.totalWeights},
                                 {"bytes",
                                  {{"codes", q.codeBytes},
                                   {"scales", q.scaleBytes},
                                   {"zero_points", q.zeroPointBytes},
                                   {"floating_point", q.floatBytes},
                                   {"floating_point_dtype", q.floatDtype},
                                   {"weights", q.weightBytes()},
                                   {"dequantization_workspace", q.workspaceBytes},
                                   {"activations", q.activationBytes},
                                   {"inference_bill", q.inferenceBytes()}}},
                                 {"validation_loss", finite(q.loss)},
                                 {"unquantized_validation_loss", finite(q.baseLoss)},
                                 {"delta_loss", finite(q.lossDelta())},
                                 {"kl_nats", finite(q.kl)},
                                 {"top1_agreement", finite(q.top1Agreement)},
                                 {"sensitivity", sensitivity}});
    }
    return quantizations;
}

// One run: its record, speed, memory by role, timelines, quantizations and every step's metrics.
nlohmann::json runJson(const ReportRun &r)
{
    nlohmann::json changes = nlohmann::json::object();
    for (const auto &change : r.changes)
        changes[change.path] = {{"baseline", change.values.at(0)}, {"run", change.values.at(1)}};
    nlohmann::json dtypes = nlohmann::json::object();
    for (const auto &[name, dtype] : r.dtypes)
        dtypes[name] = dtype;
    nlohmann::json memory = nlohmann::json::array();
    for (const auto &line : r.memoryLines)
        memory.push_back({{"role", memoryRoleName(line.role)},
                          {"dtype", line.dtype},
                          {"predicted_bytes", line.predicted},
                          {"measured_bytes", line.measured}});
    nlohmann::json metrics = nlohmann::json::array();
    for (const auto &m : r.metrics)
        metrics.push_back(metricJson(m));
    nlohmann::json validation = nlohmann::json::array();
    for (const auto &v : r.summary.validation)
        validation.push_back(validationJson(v));
    const RunSummary &s = r.summary;
    nlohmann::json ranks = nlohmann::json::array();
    for (const RankRecord &rank : s.ranks) {
        const auto found = s.rankMemory.find(rank.rank);
        ranks.push_back(rankJson(rank, found != s.rankMemory.end() ? found->second : std::vector<MemoryRow>{}));
    }
    nlohmann::json run = runRecordJson(s.run, r.origin);
    run.update({{"group", r.group},
                {"outcome_text", r.outcomeText},
                {"tokens_per_second",
                 {{"median", s.throughput.median},
                  {"p10", s.throughput.p10},
                  {"p90", s.throughput.p90},
                  {"steps", s.throughput.steps}}},
                {"mfu", s.mfu()},
                {"achieved_gflops", s.achievedGflops},
                {"matmul_peak_gflops", s.peakGflops},
                {"matmul_peak_path", s.peakPath},
                {"machine_index",
                 {{"median_gflops", s.machine.medianGflops},
                  {"variation", s.machine.variation},
                  {"flagged", s.machine.flagged()},
                  {"normalised_tokens_per_second", s.machine.normalisedMedian}}},
                {"peak_bytes", s.peakBytes},
                {"batch", s.config ? effectiveBatch(*s.config) : ""},
                {"ranks", ranks},
                {"config_changes", changes},
                {"dtypes", dtypes},
                {"memory", memory},
                {"memory_timelines", timelinesJson(s.timelines)},
                {"quantizations", quantizationsJson(s.quantizations)},
                {"quantizations_leave_untouched", s.quantizations.empty() ? "" : quantizationUntouched()},
                {"validation", validation},
                {"metrics", metrics}});
    return run;
}

} // namespace

std::string reportJson(const Report &report)
{
    nlohmann::json groups = nlohmann::json::array();
    for (const ComparisonRow &c : report.groups)
        groups.push_back(groupJson(c, report.tolerance));
    nlohmann::json runs = nlohmann::json::array();
    for (const auto &r : report.runs)
        runs.push_back(runJson(r));
    nlohmann::json environment = nlohmann::json::object();
    for (const auto &[k, v] : report.environment)
        environment[k] = v;
    return nlohmann::json{{"study", report.study},
                          {"baseline", report.baseline},
                          {"tolerance", report.tolerance},
                          {"created_at", report.createdAt},
                          {"optlog", report.optlogVersion},
                          {"groups", groups},
                          {"runs", runs},
                          {"environment", environment}}
        .dump(2);
}

} // namespace optlog
