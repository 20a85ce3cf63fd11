// SPDX-License-Identifier: MIT
#include "core/analysis/analysis.h"

#include "core/analysis/studytext.h"
#include "core/analysis/texttable.h"
#include "core/config/config.h"
#include "core/contract/dtype.h"
#include "core/contract/format.h"
#include "core/contract/quantiles.h"
#include "core/memorymodel/modelshape.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <limits>
#include <sstream>

namespace optlog {

namespace {

std::string percent(double fraction)
{
    char text[32];
    std::snprintf(text, sizeof(text), "%.0f%%", std::fabs(fraction) * 100);
    return text;
}

} // namespace

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

std::string originText(const RunRecord &run, const std::string &study)
{
    if (run.derivedFrom.empty())
        return "";
    std::error_code error;
    const bool here = std::filesystem::equivalent(run.derivedFrom.study, study, error);
    return "derived from run " + std::to_string(run.derivedFrom.runId) + " (" + run.derivedFrom.runName + ") of "
           + (here ? "this study" : run.derivedFrom.study);
}

std::string derivedRunName(const std::string &source, const std::vector<RunRecord> &existing)
{
    const auto taken = [&existing](const std::string &name) {
        return std::any_of(existing.begin(), existing.end(), [&name](const RunRecord &r) { return r.name == name; });
    };
    std::string name;
    for (int version = 2; name.empty() || taken(name); ++version)
        name = source + " v" + std::to_string(version);
    return name;
}

std::string changesFromOrigin(const Store &store, const RunRecord &run)
{
    std::error_code error;
    if (run.derivedFrom.empty() || !std::filesystem::equivalent(run.derivedFrom.study, store.path(), error))
        return "";
    std::optional<RunRecord> source; // by id: a run may be named "3"
    for (auto &candidate : store.runs())
        if (candidate.id == run.derivedFrom.runId)
            source = std::move(candidate);
    if (!source)
        return "";
    try {
        RunConfig before, after;
        applyTomlText(before, source->configToml, "run " + std::to_string(source->id));
        applyTomlText(after, run.configToml, "run " + std::to_string(run.id));
        std::string changes;
        for (const auto &field : compareConfigs({before, after}))
            if (field.differs && field.path != "name" && field.path != "group")
                changes += (changes.empty() ? "" : ", ") + field.path + " " + field.values[0] + " -> "
                           + field.values[1];
        return changes.empty() ? "unchanged" : "changed: " + changes;
    } catch (const std::exception &) {
        return ""; // a config this optlog cannot read: the link alone
    }
}

std::string tagsText(const RunRecord &run)
{
    std::string out;
    for (const auto &tag : run.tags)
        out += (out.empty() ? "" : ", ") + tag;
    return out;
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

std::string recordedRunLimits()
{
    return "its MFU needs the model's FLOPs per token, which its trainer gives (run.flops_per_token) or optlog "
           "counts over run.memory's step (PyTorch 2.1 and later), and this machine's matmul peak, which the "
           "engine's runs or `optlog tune --peak-only` cache; its memory prediction needs optlog's memory model, which "
           "knows only the engine's GPT (named in engine config keys). Where one is missing it shows '-'";
}

std::string outcomeText(const RunRecord &run, bool withMessage)
{
    std::string text = outcomeName(run.outcome);
    if (!run.outcome || *run.outcome == Outcome::Completed)
        return text;
    // Crashed, failed and cancelled name the last step completed; with none, the run ended first.
    text += run.outcomeStep >= 0 ? " at step " + std::to_string(run.outcomeStep) : " before its first step";
    if (withMessage && !run.message.empty())
        text += ": " + run.message; // an oom names the phase, the request and the budget
    return text;
}

std::vector<std::pair<PrecisionState, std::string>> storedDtypes(const RunRecord &run)
{
    std::vector<std::pair<PrecisionState, std::string>> dtypes;
    try {
        const auto stored = nlohmann::json::parse(run.dtypesJson.empty() ? "{}" : run.dtypesJson);
        if (stored.empty())
            return dtypes;
        for (PrecisionState state : kPrecisionStates)
            dtypes.push_back({state, stored.value(precisionStateKey(state), std::string("none"))});
    } catch (const nlohmann::json::exception &) {
        dtypes.clear(); // written by hand or by another program: no dtypes rather than wrong ones
    }
    return dtypes;
}

RunSummary summarize(const Store &store, const RunRecord &run)
{
    RunSummary s = summarize(run, store.metrics(run.id), store.validation(run.id), store.memory(run.id),
                             store.events(run.id), store.numerics(run.id));
    s.weightFiles = store.weightFiles(run.id);
    s.quantizations = store.quantizations(run.id);
    s.ranks = store.ranks(run.id);
    for (const RankRecord &rank : s.ranks)
        s.rankMemory[rank.rank] = rank.rank == 0 ? s.memory : store.memory(run.id, rank.rank);
    return s;
}

namespace {

// The roles a rank's table shows: the model state and the buffers, which data parallelism and
// ZeRO change, then the peak.
constexpr MemoryRole kRankRoles[] = {MemoryRole::Gradients, MemoryRole::MasterWeights, MemoryRole::OptimizerState,
                                     MemoryRole::CommunicationBuffers, MemoryRole::Peak};

} // namespace

std::vector<std::string> rankHeader()
{
    std::vector<std::string> header = {"Rank", "Host", "Outcome", "Step time", "In collectives"};
    for (MemoryRole role : kRankRoles)
        header.push_back(memoryRoleLabel(role));
    return header;
}

std::vector<std::vector<std::string>> rankRows(const RunSummary &summary)
{
    // A run on one process is its own rank 0.
    std::vector<RankRecord> ranks = summary.ranks;
    std::map<int64_t, std::vector<MemoryRow>> memory = summary.rankMemory;
    if (ranks.empty()) {
        RankRecord own;
        own.host = summary.run.host;
        own.outcome = outcomeName(summary.run.outcome);
        ranks.push_back(own);
        memory[0] = summary.memory;
    }
    std::vector<std::vector<std::string>> rows;
    for (const RankRecord &rank : ranks) {
        const bool timed = rank.measuredSteps > 0 && rank.stepSeconds > 0;
        std::vector<std::string> row
            = {std::to_string(rank.rank), printable(rank.host), rank.outcome,
               timed ? formatted("%.1f ms", 1000.0 * rank.stepSeconds / double(rank.measuredSteps)) : "-",
               timed ? formatted("%.0f%%", 100.0 * rank.communicationSeconds / rank.stepSeconds) : "-"};
        const auto &rows0 = memory[rank.rank];
        for (MemoryRole role : kRankRoles) {
            int64_t measured = -1, predicted = -1;
            for (const MemoryRow &m : rows0)
                if (m.role == role)
                    (m.source == MemorySource::Measured ? measured : predicted) = m.bytes;
            row.push_back(measured < 0 && predicted < 0 ? "-"
                                                        : (measured >= 0 ? formatBytes(measured) : "-") + " / "
                                                              + (predicted >= 0 ? formatBytes(predicted) : "-"));
        }
        rows.push_back(row);
    }
    return rows;
}

std::string formatDataParallel(const std::vector<RunSummary> &runs)
{
    const bool any = std::any_of(runs.begin(), runs.end(), [](const RunSummary &s) { return !s.ranks.empty(); });
    if (!any)
        return "";
    std::vector<std::string> header = {"Run", "Ranks", "ZeRO", "Tokens/s (all ranks)"};
    for (const std::string &column : rankHeader())
        header.push_back(column);
    std::vector<std::vector<std::string>> rows;
    for (const RunSummary &s : runs) {
        const std::string ranks = s.config ? std::to_string(s.config->distributed.ranks) : "?";
        const std::string stage = s.config ? std::to_string(s.config->distributed.zeroStage) : "?";
        for (const auto &rankRow : rankRows(s)) {
            std::vector<std::string> row = {printable(s.run.name), ranks, stage,
                                            rankRow.front() == "0" ? formatted("%.0f", s.throughput.median) : ""};
            row.insert(row.end(), rankRow.begin(), rankRow.end());
            rows.push_back(row);
        }
    }
    return "\nData parallel, per rank (memory: measured / predicted):\n" + alignedTable(header, rows, "  ");
}

double communicationShare(const RunSummary &summary)
{
    for (const RankRecord &rank : summary.ranks)
        if (rank.rank == 0 && rank.stepSeconds > 0)
            return rank.communicationSeconds / rank.stepSeconds;
    return std::nan("");
}

std::string effectiveBatch(const RunConfig &config)
{
    const auto &t = config.train;
    const int64_t sequences = config.distributed.ranks * t.microbatch * t.accumulation;
    return (config.distributed.ranks > 1 ? std::to_string(config.distributed.ranks) + " ranks x " : std::string())
           + "microbatch " + std::to_string(t.microbatch) + " x accumulation " + std::to_string(t.accumulation) + " = "
           + std::to_string(sequences) + " sequences per step";
}

std::string quantizationLabel(const QuantizationResult &r)
{
    std::string label = r.scheme + (r.groupSize > 0 ? " g" + std::to_string(r.groupSize) : " per channel");
    if (!r.int8Tensors.empty())
        label += " (int8: " + r.int8Tensors + ")";
    return label;
}

std::vector<std::string> quantizationHeader()
{
    return {"Weights",    "Bits per weight", "Weight bytes",    "Inference bill",       "Val loss",
            "Δ val loss", "KL (nats)",       "Top-1 agreement", "Most sensitive tensor"};
}

std::vector<std::vector<std::string>> quantizationRows(const std::vector<QuantizationResult> &results)
{
    std::vector<std::vector<std::string>> rows;
    if (results.empty())
        return rows;
    // The run's own weights: every element in its floating-point dtype.
    const QuantizationResult &first = results.front();
    int64_t ownBytes = 0;
    for (Dtype dtype : {Dtype::Float32, Dtype::BFloat16, Dtype::Float16})
        if (first.floatDtype == dtypeName(dtype))
            ownBytes = first.totalWeights * dtypeBytes(dtype);
    rows.push_back({first.floatDtype + " (the run's own)",
                    ownBytes ? formatted("%.2f", 8.0 * double(ownBytes) / double(first.totalWeights)) : "-",
                    ownBytes ? formatBytes(ownBytes) : "-", "-", formatted("%.4f", first.baseLoss), "0", "0", "100.0%",
                    "-"});
    for (const auto &r : results)
        rows.push_back({quantizationLabel(r), formatted("%.2f", r.bitsPerWeight()), formatBytes(r.weightBytes()),
                        formatBytes(r.inferenceBytes()), formatted("%.4f", r.loss), formatted("%+.5f", r.lossDelta()),
                        formatted("%.5f", r.kl), formatted("%.1f%%", 100.0 * r.top1Agreement),
                        r.sensitivity.empty() ? "-"
                                              : formatted("%s (%+.5f)", r.sensitivity.front().tensor.c_str(),
                                                          r.sensitivity.front().lossDelta)});
    return rows;
}

std::string quantizationUntouched()
{
    return "Quantizing weights shrinks the weights only: in training it leaves the optimizer state, the gradients "
           "and the activations as they were; in inference the activations (and a KV cache, which this model's "
           "evaluation does not keep) stay in floating point. The inference bill counts the packed codes, their "
           "scales and zero points, the tensors kept in floating point, the dequantization workspace (one matrix at "
           "a time, FP32) and the activations of one validation batch, all measured. Simulated: the matmuls run on "
           "dequantized FP32 weights; there are no int4 kernels here.";
}

RunSummary summarize(const RunRecord &run, const std::vector<StepMetrics> &metrics,
                     std::vector<ValidationPoint> validation, const std::vector<MemoryRow> &memory,
                     const std::vector<EventRecord> &events, std::vector<TensorNumerics> numerics)
{
    RunSummary s;
    s.run = run;
    for (const auto &event : events)
        if (isInstability(event.kind)) {
            ++s.instabilities[event.kind];
            s.instabilitySteps.push_back(event.step);
        }
    s.numerics = std::move(numerics);
    RunConfig config;
    const nlohmann::json environment = environmentObject(run);
    s.recorder = recorderIn(environment);
    try {
        // A recorded run's keys are its trainer's, whatever they are named: never the engine's fields.
        if (s.recorder.empty()) {
            applyTomlText(config, run.configToml, "run " + std::to_string(run.id));
            s.config = config;
            s.parameters = config.model.source == ModelSource::Builtin
                               ? parameterCount(config.model)
                               : environment.value("/torchscript_model/parameters"_json_pointer, int64_t(0));
            s.warmupSteps = config.memory.warmupSteps;
        }
    } catch (const ConfigError &) {
        // A config written by another optlog version: the numbers below still stand.
    }
    s.throughput = steadyThroughput(metrics, s.warmupSteps);
    s.machine = machineSpeed(metrics, s.warmupSteps);
    if (s.parameters > 0)
        s.flopsPerToken = modelFlopsPerToken(s.parameters, config.model.layers, config.model.contextLength,
                                             config.model.width);
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
    s.achievedGflops = s.flopsPerToken * s.throughput.median / 1e9;
    // The peak is the best the machine has shown: the run's own rate, where it showed more.
    if (s.peakGflops > 0 && s.achievedGflops > s.peakGflops) {
        s.peakGflops = s.achievedGflops;
        s.peakBeatenByRun = true;
    }
    s.validation = std::move(validation);
    s.memory = memory;
    for (const auto &row : memory) {
        if (row.source != MemorySource::Measured)
            continue;
        if (row.role == MemoryRole::Peak)
            s.peakBytes = row.bytes;
        if (row.role == MemoryRole::PeakRss)
            s.peakRssBytes = row.bytes;
    }
    return s;
}

std::vector<RoleMemory> memoryByRole(const std::vector<MemoryRow> &rows)
{
    std::vector<RoleMemory> lines;
    for (MemoryRole role : kMemoryRoles) {
        RoleMemory line;
        line.role = role;
        for (const auto &row : rows) {
            if (row.role != role)
                continue;
            (row.source == MemorySource::Predicted ? line.predicted : line.measured) = row.bytes;
            if (line.dtype.empty() || row.source == MemorySource::Measured)
                line.dtype = row.dtype;
        }
        if (line.predicted >= 0 || line.measured >= 0)
            lines.push_back(line);
    }
    return lines;
}

std::string residualText(const RoleMemory &line)
{
    if (line.predicted <= 0 || line.measured < 0)
        return "";
    char text[32];
    std::snprintf(text, sizeof(text), "%+.1f%%",
                  100.0 * double(line.measured - line.predicted) / double(line.predicted));
    return text;
}

std::string formatMemoryByRole(const std::vector<RunSummary> &runs)
{
    // Short headings: seven roles and the peak fit a terminal's 120 columns beside a run's name.
    const auto heading = [](MemoryRole role) {
        switch (role) {
        case MemoryRole::Parameters: return "params";
        case MemoryRole::Gradients: return "grads";
        case MemoryRole::MasterWeights: return "masters";
        case MemoryRole::OptimizerState: return "optimizer";
        case MemoryRole::CommunicationBuffers: return "comm buffers";
        case MemoryRole::SavedActivations: return "activations";
        case MemoryRole::Temporaries: return "temporaries";
        default: return memoryRoleLabel(role);
        }
    };
    // Communication buffers only where a run trained over ranks.
    std::vector<MemoryRole> roles;
    for (MemoryRole role : kPeakParts)
        if (role != MemoryRole::CommunicationBuffers
            || std::any_of(runs.begin(), runs.end(), [](const RunSummary &r) { return !r.ranks.empty(); }))
            roles.push_back(role);
    std::vector<TextTable::Column> columns = {{"memory by role"}};
    for (MemoryRole role : roles)
        columns.push_back({heading(role), TextTable::Align::Right});
    columns.push_back({"peak", TextTable::Align::Right});
    TextTable table(columns);
    for (const auto &run : runs) {
        std::vector<std::string> cells = {printable(run.run.name)};
        const std::vector<RoleMemory> lines = memoryByRole(run.memory);
        for (MemoryRole role : roles) {
            std::string text = "-";
            // A state has one dtype; activations and temporaries hold several, as the note says.
            for (const auto &line : lines)
                if (line.role == role && line.measured >= 0)
                    text = formatBytes(line.measured)
                           + (line.dtype.empty() || line.dtype == "mixed" ? "" : " " + shortDtype(line.dtype));
            cells.push_back(text);
        }
        cells.push_back(run.peakBytes > 0 ? formatBytes(run.peakBytes) : "-");
        table.addRow(cells);
    }
    return table.render()
           + wrapped("Measured; each state with the dtype read from the run's tensors. Saved activations and "
                     "temporaries are the allocator's bytes over a step, in several dtypes. \"-\": the run has no "
                     "such state (master weights exist in the master modes only). `optlog show STUDY RUN` sets each "
                     "beside the memory model's prediction.");
}

} // namespace optlog
