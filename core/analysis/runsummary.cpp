// SPDX-License-Identifier: MIT
#include "core/analysis/runsummary.h"

#include "core/analysis/runtext.h"
#include "core/contract/format.h"
#include "core/contract/quantiles.h"
#include "core/memorymodel/memorymodel.h"
#include "core/memorymodel/modelshape.h"
#include "core/store/weights.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

namespace optlog {

ThroughputSummary steadyThroughput(const std::vector<StepMetrics> &metrics, int64_t warmupSteps)
{
    std::vector<double> rates;
    for (const auto &m : metrics)
        if (m.step >= warmupSteps && m.tokensPerSecond > 0)
            rates.push_back(m.tokensPerSecond);
    ThroughputSummary s;
    const int64_t blocks = std::min<int64_t>(ThroughputSummary::kBlocks, int64_t(rates.size()) / 2);
    for (int64_t b = 0; b < blocks; ++b) {
        std::vector<double> block(rates.begin() + b * int64_t(rates.size()) / blocks,
                                  rates.begin() + (b + 1) * int64_t(rates.size()) / blocks);
        std::sort(block.begin(), block.end());
        s.blocks.push_back(quantileOfSorted(block, 0.5));
    }
    std::sort(rates.begin(), rates.end());
    s.steps = int64_t(rates.size());
    s.median = quantileOfSorted(rates, 0.5);
    s.p10 = quantileOfSorted(rates, 0.1);
    s.p90 = quantileOfSorted(rates, 0.9);
    return s;
}

double validationAt(const std::vector<ValidationPoint> &points, int64_t tokens)
{
    for (size_t i = 0; i < points.size(); ++i) {
        if (points[i].tokens == tokens)
            return points[i].loss;
        if (i > 0 && points[i - 1].tokens < tokens && tokens < points[i].tokens) {
            const double w = double(tokens - points[i - 1].tokens) / double(points[i].tokens - points[i - 1].tokens);
            return points[i - 1].loss * (1 - w) + points[i].loss * w;
        }
    }
    return std::numeric_limits<double>::quiet_NaN();
}

std::string MachineSpeed::describe() const
{
    if (!flagged())
        return "";
    std::string text;
    if (slowdown > kTolerance / 2)
        text = "the machine slowed by " + percent(slowdown) + " during this run";
    else if (slowdown < -kTolerance / 2)
        text = "the machine sped up by " + percent(-slowdown) + " during this run";
    else
        text = "the machine's speed varied by " + percent(variation) + " during this run";
    char normalised[96];
    std::snprintf(normalised, sizeof(normalised), " (reference kernel; %.0f tokens/s normalised to its median)",
                  normalisedMedian);
    return text + normalised;
}

MachineSpeed machineSpeed(const std::vector<StepMetrics> &metrics, int64_t warmupSteps)
{
    MachineSpeed speed;
    std::vector<double> index;
    for (const auto &m : metrics)
        if (m.step >= warmupSteps && m.machineGflops > 0)
            index.push_back(m.machineGflops);
    speed.probes = int64_t(index.size());
    if (index.empty())
        return speed;
    std::vector<double> sorted = index;
    std::sort(sorted.begin(), sorted.end());
    speed.medianGflops = quantileOfSorted(sorted, 0.5);
    speed.variation = 1
                      - quantileOfSorted(sorted, 0.1) / quantileOfSorted(sorted, 0.9); // one odd timing is not a trend
    const size_t third = std::max<size_t>(1, index.size() / 3);
    std::vector<double> first(index.begin(), index.begin() + long(third));
    std::vector<double> last(index.end() - long(third), index.end());
    std::sort(first.begin(), first.end());
    std::sort(last.begin(), last.end());
    speed.slowdown = 1 - quantileOfSorted(last, 0.5) / quantileOfSorted(first, 0.5);
    // Each step's tokens/s scaled by how fast the machine was at the nearest earlier timing.
    std::vector<double> normalised;
    double current = 0;
    for (const auto &m : metrics) {
        if (m.machineGflops > 0)
            current = m.machineGflops;
        if (m.step >= warmupSteps)
            normalised.push_back(m.tokensPerSecond * (current > 0 ? speed.medianGflops / current : 1.0));
    }
    std::sort(normalised.begin(), normalised.end());
    speed.normalisedMedian = quantileOfSorted(normalised, 0.5);
    return speed;
}

namespace {

// A run's stored environment; an empty object when it has none or it is not JSON.
nlohmann::json environmentObject(const RunRecord &run)
{
    nlohmann::json environment = nlohmann::json::parse(run.environmentJson, nullptr, /*allow_exceptions=*/false);
    return environment.is_object() ? environment : nlohmann::json::object();
}

std::string recorderIn(const nlohmann::json &environment)
{
    const auto recorder = environment.find("recorder");
    return recorder != environment.end() && recorder->is_string() ? recorder->get<std::string>() : std::string();
}

} // namespace

std::string recorderOf(const RunRecord &run)
{
    return recorderIn(environmentObject(run));
}

RunSummary summarize(const Store &store, const RunRecord &run)
{
    RunSummary s = summarize(run, store.metrics(run.id), store.validation(run.id), store.memory(run.id),
                             store.events(run.id), store.numerics(run.id));
    s.weightFiles = weightFiles(store, run.id);
    s.quantizations = quantizations(store, run.id);
    s.ranks = store.ranks(run.id);
    for (const RankRecord &rank : s.ranks)
        s.rankMemory[rank.rank] = rank.rank == 0 ? s.memory : store.memory(run.id, rank.rank);
    s.timelines = store.timelines(run.id);
    return s;
}

namespace {

void countInstabilities(RunSummary &s, const std::vector<EventRecord> &events)
{
    for (const auto &event : events)
        if (isInstability(event.kind)) {
            ++s.instabilities[event.kind];
            s.instabilitySteps.push_back(event.step);
        }
}

// An engine run's config, parameter count, warm-up and predicted peak phase into `s`; `config` keeps
// what was read, for the FLOPs and the peak (the defaults for a recorded run).
void readEngineConfig(RunSummary &s, RunConfig &config, const RunRecord &run, const nlohmann::json &environment)
{
    try {
        // A recorded run's keys are its trainer's, whatever they are named: never the engine's fields.
        if (s.recorder.empty()) {
            applyTomlText(config, run.configToml, "run " + std::to_string(run.id));
            s.config = config;
            s.parameters = config.model.source == ModelSource::Builtin
                               ? parameterCount(config.model)
                               : environment.value("/torchscript_model/parameters"_json_pointer, int64_t(0));
            s.warmupSteps = config.memory.warmupSteps;
            if (config.model.source == ModelSource::Builtin)
                s.predictedPeakPhase = estimateMemory(config).peakPhase.name();
        }
    } catch (const ConfigError &) {
        // A config written by another optlog version: the numbers below still stand.
    }
}

// The matmul peak the run is measured against (its dtype, path and GFLOP/s), and what else the
// environment says: the machine, whether it was tuned, a recorded run's FLOPs per token.
void readMatmulPeak(RunSummary &s, const RunConfig &config, const RunRecord &run, const nlohmann::json &environment)
{
    // Each run is measured against the matmul peak of its compute dtype (FP32 in TF32: its own); a
    // recorded run's is the narrowest dtype its memory probe saw modules compute in.
    s.peakDtype = dtypeName(precisionModeOf(config).compute);
    if (config.precision.tf32 && s.peakDtype == "float32")
        s.peakDtype = "tfloat32";
    try {
        s.untunedSettings = environment.value("tuning", std::string()).rfind("untuned", 0) == 0;
        s.machineIdentity = MachineIdentity::of(environment);
        // A recorded run's FLOPs per token are what its trainer gave or counted, and its products
        // are PyTorch's own: on a CPU, ATen's path.
        std::string path;
        if (!s.recorder.empty()) {
            const nlohmann::json flops = environment.value("model_flops", nlohmann::json::object());
            s.flopsPerToken = flops.value("per_token", 0.0);
            s.flopsHow = flops.value("how", std::string());
            for (const auto &[state, dtype] : storedDtypes(run))
                if (state == PrecisionState::Compute && (dtype == "bfloat16" || dtype == "float16"))
                    s.peakDtype = dtype;
            path = "aten";
        } else if (environment.contains("product_path")) {
            path = environment["product_path"].value("path", std::string());
        }
        // Rank 0's peak at its threads, once per rank: the throughput counts every rank's tokens.
        // On a CPU, the peak of the path the run's products took, where it was measured (runs
        // before paths were recorded: the best path's).
        if (environment.contains("matmul_peak")) {
            const nlohmann::json &peak = environment["matmul_peak"];
            s.peakGflops = peak.value(s.peakDtype + "_gflops", 0.0);
            if (!path.empty()) {
                const nlohmann::json &byPath = peak.value("path_gflops", nlohmann::json::object());
                if (byPath.contains(s.peakDtype) && byPath[s.peakDtype].contains(path)) {
                    s.peakGflops = byPath[s.peakDtype][path].get<double>();
                    s.peakPath = path;
                }
            }
            s.peakGflops *= double(config.distributed.ranks);
        }
    } catch (const nlohmann::json::exception &) {
        // a run without a readable environment has no MFU
    }
}

// The measured peaks: the counting allocator's and the process's high-water mark.
void readMeasuredPeaks(RunSummary &s, const std::vector<MemoryRow> &memory)
{
    for (const auto &row : memory) {
        if (row.source != MemorySource::Measured)
            continue;
        if (row.role == MemoryRole::Peak)
            s.peakBytes = row.bytes;
        if (row.role == MemoryRole::PeakRss)
            s.peakRssBytes = row.bytes;
    }
}

} // namespace

RunSummary summarize(const RunRecord &run, const std::vector<StepMetrics> &metrics,
                     std::vector<ValidationPoint> validation, const std::vector<MemoryRow> &memory,
                     const std::vector<EventRecord> &events, std::vector<TensorNumerics> numerics)
{
    RunSummary s;
    s.run = run;
    countInstabilities(s, events);
    s.numerics = std::move(numerics);
    RunConfig config;
    const nlohmann::json environment = environmentObject(run);
    s.recorder = recorderIn(environment);
    readEngineConfig(s, config, run, environment);
    s.throughput = steadyThroughput(metrics, s.warmupSteps);
    s.machine = machineSpeed(metrics, s.warmupSteps);
    if (s.parameters > 0)
        s.flopsPerToken = modelFlopsPerToken(s.parameters, config.model.layers, config.model.contextLength,
                                             config.model.width);
    readMatmulPeak(s, config, run, environment);
    s.achievedGflops = s.flopsPerToken * s.throughput.median / 1e9;
    // The peak is the best the machine has shown: the run's own rate, where it showed more.
    if (s.peakGflops > 0 && s.achievedGflops > s.peakGflops) {
        s.peakGflops = s.achievedGflops;
        s.peakBeatenByRun = true;
    }
    s.validation = std::move(validation);
    s.memory = memory;
    readMeasuredPeaks(s, memory);
    return s;
}

} // namespace optlog
