// SPDX-License-Identifier: MIT
#include "core/analysis/studytext.h"

#include "core/analysis/comparison.h"
#include "core/analysis/decisionwords.h"
#include "core/analysis/recordjson_p.h"
#include "core/analysis/runsummary.h"
#include "core/analysis/runtables.h"
#include "core/analysis/runtext.h"
#include "core/analysis/texttable.h"
#include "core/contract/format.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <map>

namespace optlog {

namespace {

// A run's stored environment as JSON; a file edited by hand may hold something else, shown as it is.
nlohmann::json environmentOf(const RunRecord &run)
{
    if (run.environmentJson.empty())
        return nlohmann::json::object();
    nlohmann::json parsed = nlohmann::json::parse(run.environmentJson, nullptr, /*allow_exceptions=*/false);
    return parsed.is_discarded() ? nlohmann::json(run.environmentJson) : parsed;
}

} // namespace

std::string formatRunList(const Store &store, const RunFilter &filter)
{
    std::string out;
    out += formatted("%4s  %-26s %-22s %7s %10s %9s %10s %11s  %s\n", "id", "name", "outcome", "steps", "tokens",
                     "val loss", "tokens/s", "peak mem", "tags");
    size_t shown = 0, runs = 0;
    for (const auto &run : store.runs()) {
        ++runs;
        if (!filter.matches(run))
            continue;
        ++shown;
        const std::vector<StepMetrics> metrics = store.metrics(run.id);
        const RunSummary s = summarize(run, metrics, store.validation(run.id), store.memory(run.id));
        const long long steps = metrics.empty() ? 0 : static_cast<long long>(metrics.back().step + 1);
        const long long tokens = metrics.empty() ? 0 : static_cast<long long>(metrics.back().tokens);
        std::string tags = printable(tagsText(run));
        for (const auto &[marked, mark] : {std::pair{!s.recorder.empty(), "[recorded]"}, {run.archived, "[archived]"}})
            if (marked)
                tags += (tags.empty() ? "" : " ") + std::string(mark);
        out += formatted("%4lld  %-26s %-22s %7lld %10lld %9s %10.0f %11s  %s\n", static_cast<long long>(run.id),
                         printable(run.name).c_str(), outcomeText(run).c_str(), steps, tokens,
                         s.validation.empty() ? "-" : std::to_string(s.validation.back().loss).substr(0, 6).c_str(),
                         s.throughput.median, s.peakBytes ? formatBytes(s.peakBytes).c_str() : "-", tags.c_str());
    }
    if (shown < runs)
        out += formatted("(%zu of %zu runs shown%s)\n", shown, runs,
                         filter.empty() ? "; archived runs are hidden, --all shows them" : "");
    return out;
}

std::string alignedTable(const std::vector<std::string> &header, const std::vector<std::vector<std::string>> &rows,
                         const std::string &indent)
{
    std::vector<TextTable::Column> columns;
    for (const std::string &title : header)
        columns.push_back({title});
    TextTable table(columns);
    for (const auto &row : rows)
        table.addRow(row);
    std::string out;
    for (const std::string &line : splitLines(table.render(std::string::npos)))
        if (!line.empty())
            out += indent + line + "\n";
    return out;
}

namespace {

// Who the run is: its name, outcome, origin, tags and note.
std::string runIdentityText(const Store &store, const RunRecord &run, const RunSummary &s)
{
    std::string out;
    out += formatted("run %lld: %s (group %s)\noutcome: %s%s\ncreated: %s  finished: %s  pid %lld on %s\n",
                     static_cast<long long>(run.id), printable(run.name).c_str(), printable(run.group).c_str(),
                     outcomeText(run).c_str(), run.message.empty() ? "" : (" (" + printable(run.message) + ")").c_str(),
                     run.createdAt.c_str(), run.finishedAt.c_str(), static_cast<long long>(run.pid), run.host.c_str());
    if (s.recorder.empty())
        out += formatted("parameters: %lld\n", static_cast<long long>(s.parameters));
    else
        out += "recorded by: " + printable(s.recorder) + "\n  " + recordedRunLimits() + "\n";
    if (!run.tags.empty())
        out += "tags: " + printable(tagsText(run)) + "\n";
    if (run.archived)
        out += "archived: hidden from lists and comparisons (optlog archive --undo brings it back)\n";
    for (const auto &former : run.formerNames)
        out += "formerly named: " + printable(former) + "\n";
    if (const std::string origin = originText(run, store.path()); !origin.empty()) {
        const std::string changes = changesFromOrigin(store, run);
        out += "config " + printable(origin) + (changes.empty() ? "" : ", " + printable(changes)) + "\n";
    }
    if (!run.note.empty()) {
        out += "note:\n";
        for (const auto &line : splitLines(run.note))
            out += "  " + printable(line) + "\n";
    }
    return out;
}

// What the run measured: throughput, MFU, validation, instabilities, numerics, dtypes, batch.
std::string runMeasurementsText(const RunRecord &run, const RunSummary &s)
{
    std::string out;
    out += formatted("steady-state throughput: %.0f tokens/s (p10 %.0f, p90 %.0f, over %lld steps after warm-up)\n",
                     s.throughput.median, s.throughput.p10, s.throughput.p90,
                     static_cast<long long>(s.throughput.steps));
    if (s.mfu() > 0)
        out += formatted("MFU: %.1f%% (%.2f M FLOPs per token%s x tokens/s over the %.0f GFLOP/s %s matmul peak%s)\n",
                         100 * s.mfu(), s.flopsPerToken / 1e6, s.flopsHow.empty() ? "" : (", " + s.flopsHow).c_str(),
                         s.peakGflops, s.peakDtype.c_str(),
                         s.peakPath.empty() ? "" : (" of the " + s.peakPath + " path").c_str())
               + (s.peakBeatenByRun ? "  the run's own rate, above every peak measured for it\n" : "");
    if (!s.validation.empty()) {
        const ValidationPoint &last = s.validation.back();
        out += formatted("validation loss: %.4f at %lld tokens", last.loss, static_cast<long long>(last.tokens));
        if (!std::isnan(last.samplingError()))
            out += formatted(" (the validation set's own standard error ±%.4f over %lld sequences)",
                             last.samplingError(), static_cast<long long>(last.sequences));
        out += "\n";
    }
    if (const std::string unstable = instabilityText(s.instabilities); !unstable.empty())
        out += unstable + "\n";
    if (const std::string numerics = numericsText(s.numerics); !numerics.empty())
        out += "numerics " + numerics + "\n";
    const auto dtypes = storedDtypes(run);
    if (!dtypes.empty()) {
        std::string line;
        for (const auto &[state, dtype] : dtypes)
            line += (line.empty() ? "" : "; ") + std::string(precisionStateLabel(state)) + " " + dtype;
        out += "dtypes (read from the tensors): " + line + "\n";
    }
    if (s.config)
        out += "batch: " + effectiveBatch(*s.config) + "\n";
    return out;
}

// The memory by role, predicted against measured, and each rank's.
std::string runMemoryText(const RunSummary &s)
{
    std::string out = "\nmemory by role            dtype        predicted     measured     residual"
                      + std::string(s.ranks.empty() ? "" : " (rank 0)") + "\n";
    for (const RoleMemory &line : memoryByRole(s.memory)) {
        const bool both = line.predicted >= 0 && line.measured >= 0;
        out += formatted("  %-22s %-10s %12s %12s %12s\n", memoryRoleName(line.role), line.dtype.c_str(),
                         line.predicted >= 0 ? formatBytes(line.predicted).c_str() : "-",
                         line.measured >= 0 ? formatBytes(line.measured).c_str() : "-",
                         both ? formatBytes(line.measured - line.predicted).c_str() : "-");
    }
    if (!s.ranks.empty())
        out += "\nranks (data parallel"
               + (s.config ? ", ZeRO stage " + std::to_string(s.config->distributed.zeroStage) : std::string())
               + "; memory measured / predicted):\n" + alignedTable(rankHeader(), rankRows(s), "  ");
    return out;
}

// The weight files the run left on disk, and the quantizations made of them.
std::string runWeightsText(const RunSummary &s)
{
    std::string out;
    if (!s.weightFiles.empty()) {
        int64_t bytes = 0;
        for (const WeightFile &file : s.weightFiles)
            bytes += file.bytes;
        out += "\nweights on disk (" + formatBytes(bytes) + "; `optlog prune` removes the checkpoints):\n";
        for (const WeightFile &file : s.weightFiles)
            out += formatted("  %-10s step %-6lld %10s  %s  sha256 %s\n", weightFileKindName(file.kind),
                             static_cast<long long>(file.step), formatBytes(file.bytes).c_str(),
                             printable(file.path).c_str(), file.sha256.substr(0, 16).c_str());
    }
    if (!s.quantizations.empty())
        out += "\nquantizations of the final weights (`optlog quantize`):\n"
               + alignedTable(quantizationHeader(), quantizationRows(s.quantizations), "  ") + "  "
               + quantizationUntouched() + "\n";
    return out;
}

} // namespace

std::string formatRunDetail(const Store &store, const RunRecord &run)
{
    const RunSummary s = summarize(store, run);
    std::string out = runIdentityText(store, run, s);
    out += runMeasurementsText(run, s);
    out += runMemoryText(s);
    out += runWeightsText(s);
    out += "\nevents:\n";
    for (const auto &e : store.events(run.id))
        out += formatted("  %s %-15s %s\n", e.at.c_str(), eventKindName(e.kind), printable(e.message).c_str());
    out += "\nenvironment:\n" + environmentOf(run).dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
           + "\n\nconfig:\n" + run.configToml;
    return out;
}

void writeMetricsCsv(const Store &store, std::ostream &out)
{
    out << "run_id,run_name,step,tokens,train_loss,learning_rate,grad_norm,step_seconds,tokens_per_second,val_loss\n";
    for (const auto &run : store.runs()) {
        std::map<int64_t, double> validation;
        for (const auto &v : store.validation(run.id))
            validation[v.step] = v.loss;
        for (const auto &m : store.metrics(run.id)) {
            out << run.id << ',' << csvField(run.name) << ',' << m.step << ',' << m.tokens << ',' << m.trainLoss << ','
                << m.learningRate << ',' << m.gradNorm << ',' << m.stepSeconds << ',' << m.tokensPerSecond << ',';
            if (validation.count(m.step))
                out << validation[m.step];
            out << '\n';
        }
    }
}

std::string studyJson(const Store &store)
{
    nlohmann::json runs = nlohmann::json::array();
    for (const auto &run : store.runs()) {
        nlohmann::json r = runRecordJson(run, originText(run, store.path()));
        r["environment"] = run.environmentJson.empty() ? nlohmann::json() : environmentOf(run);
        // Each state's dtype as read from the tensors, and who recorded a run its own trainer trained.
        r["dtypes"] = nlohmann::json::parse(run.dtypesJson.empty() ? "null" : run.dtypesJson, nullptr, false);
        r["recorder"] = recorderOf(run);
        for (const auto &m : store.metrics(run.id))
            r["metrics"].push_back(metricJson(m));
        for (const RankRecord &rank : store.ranks(run.id))
            r["ranks"].push_back(rankJson(rank, store.memory(run.id, rank.rank)));
        for (const auto &v : store.validation(run.id))
            r["validation"].push_back(validationJson(v));
        for (const auto &m : store.memory(run.id))
            r["memory"].push_back(memoryRowJson(m));
        r["memory_timelines"] = timelinesJson(store.timelines(run.id));
        for (const auto &e : store.events(run.id))
            r["events"].push_back({{"at", e.at},
                                   {"kind", eventKindName(e.kind)},
                                   {"message", e.message},
                                   {"step", e.step >= 0 ? nlohmann::json(e.step) : nlohmann::json(nullptr)}});
        // NaN (not applicable to the tensor) as null.
        const auto value = [](double v) { return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v); };
        for (const auto &n : store.numerics(run.id))
            r["numerics"].push_back({{"step", n.step},
                                     {"tensor", n.tensor},
                                     {"fp16_underflow", value(n.fp16Underflow)},
                                     {"fp16_subnormal", value(n.fp16Subnormal)},
                                     {"scaled_underflow", value(n.scaledUnderflow)},
                                     {"loss_scale", value(n.lossScale)},
                                     {"vanishing_updates", value(n.vanishingUpdates)},
                                     {"activation_max", value(n.activationMax)}});
        runs.push_back(r);
    }
    return nlohmann::json{{"study", store.path()}, {"schema_version", store.schemaVersion()}, {"runs", runs}}
               .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
           + "\n";
}

} // namespace optlog
