// SPDX-License-Identifier: MIT
// The commands that read a study: runs, show, compare, export.
#include "app/commands.h"

#include "core/analysis/analysis.h"
#include "core/config/config.h"
#include "core/memorymodel/memorymodel.h"
#include "core/store/store.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>

namespace optlog {

namespace {

std::unique_ptr<Store> openStudy(const std::string &path, const char *command)
{
    try {
        return std::make_unique<Store>(path);
    } catch (const StoreError &e) {
        std::cerr << "optlog " << command << ": " << e.what() << "\n";
        return nullptr;
    }
}

} // namespace

int estimateCommand(const EstimateRequest &request)
{
    RunConfig config;
    try {
        config = loadRunConfig(request.preset, request.configFile, request.overrides);
    } catch (const ConfigError &e) {
        std::cerr << "optlog estimate: " << e.what() << "\n";
        return kExitBadInput;
    }
    const MemoryEstimate estimate = estimateMemory(config);
    if (!request.json) {
        std::cout << formatEstimate(config, estimate, request.ranks);
        return kExitOk;
    }
    nlohmann::json out = {{"name", config.name}, {"precision", config.precision.mode}, {"peak_bytes", estimate.peakBytes}};
    for (const auto &r : estimate.roles)
        out["roles"].push_back({{"role", memoryRoleName(r.role)}, {"dtype", r.dtype}, {"bytes_per_element", r.bytesPerElement},
                                {"bytes", r.bytes}, {"note", r.note}});
    for (const auto &z : zeroSharding(config, request.ranks))
        out["zero"].push_back({{"stage", z.stage}, {"ranks", z.ranks}, {"bytes_per_rank", z.bytesPerRank}});
    for (const auto &q : quantizedWeightRows(config.model))
        out["quantized_weights"].push_back({{"format", q.format}, {"bytes", q.bytes}, {"note", q.note}});
    std::cout << out.dump(2) << "\n";
    return kExitOk;
}

int runsCommand(const std::string &path)
{
    auto store = openStudy(path, "runs");
    if (!store)
        return kExitBadInput;
    std::printf("%4s  %-26s %-22s %7s %10s %9s %10s %11s\n", "id", "name", "outcome", "steps", "tokens", "val loss",
                "tokens/s", "peak mem");
    for (const auto &run : store->runs()) {
        const RunSummary s = summarize(*store, run);
        const auto metrics = store->metrics(run.id);
        const long long steps = metrics.empty() ? 0 : static_cast<long long>(metrics.back().step + 1);
        const long long tokens = metrics.empty() ? 0 : static_cast<long long>(metrics.back().tokens);
        std::printf("%4lld  %-26s %-22s %7lld %10lld %9s %10.0f %11s\n", static_cast<long long>(run.id),
                    run.name.c_str(), outcomeText(run).c_str(), steps, tokens,
                    s.validation.empty() ? "-" : std::to_string(s.validation.back().loss).substr(0, 6).c_str(),
                    s.throughput.median, s.peakBytes ? formatBytes(s.peakBytes).c_str() : "-");
    }
    return kExitOk;
}

int showCommand(const std::string &path, const std::string &runName)
{
    auto store = openStudy(path, "show");
    if (!store)
        return kExitBadInput;
    const auto run = store->findRun(runName);
    if (!run) {
        std::cerr << "optlog show: no run '" << runName << "' in " << path << "; `optlog runs " << path
                  << "` lists them\n";
        return kExitBadInput;
    }
    const RunSummary s = summarize(*store, *run);
    std::printf("run %lld: %s\noutcome: %s%s\ncreated: %s  finished: %s  pid %lld on %s\nparameters: %lld\n",
                static_cast<long long>(run->id), run->name.c_str(), outcomeText(*run).c_str(),
                run->message.empty() ? "" : (" (" + run->message + ")").c_str(), run->createdAt.c_str(),
                run->finishedAt.c_str(), static_cast<long long>(run->pid), run->host.c_str(),
                static_cast<long long>(s.parameters));
    std::printf("steady-state throughput: %.0f tokens/s (p10 %.0f, p90 %.0f, over %lld steps after warm-up)\n",
                s.throughput.median, s.throughput.p10, s.throughput.p90, static_cast<long long>(s.throughput.steps));
    if (!s.validation.empty())
        std::printf("validation loss: %.4f at %lld tokens\n", s.validation.back().loss,
                    static_cast<long long>(s.validation.back().tokens));

    const auto dtypes = storedDtypes(*run);
    if (!dtypes.empty()) {
        std::string line;
        for (const auto &[state, dtype] : dtypes)
            line += (line.empty() ? "" : "; ") + std::string(precisionStateLabel(state)) + " " + dtype;
        std::printf("dtypes (read from the tensors): %s\n", line.c_str());
    }
    std::printf("\nmemory by role          dtype        predicted     measured     residual\n");
    for (const RoleMemory &line : memoryByRole(s.memory)) {
        const bool both = line.predicted >= 0 && line.measured >= 0;
        std::printf("  %-20s %-10s %12s %12s %12s\n", memoryRoleName(line.role), line.dtype.c_str(),
                    line.predicted >= 0 ? formatBytes(line.predicted).c_str() : "-",
                    line.measured >= 0 ? formatBytes(line.measured).c_str() : "-",
                    both ? formatBytes(line.measured - line.predicted).c_str() : "-");
    }
    std::printf("\nevents:\n");
    for (const auto &e : store->events(run->id))
        std::printf("  %s %-8s %s\n", e.at.c_str(), eventKindName(e.kind), e.message.c_str());
    std::printf("\nenvironment:\n%s\n\nconfig:\n%s", run->environmentJson.empty() ? "{}" :
                nlohmann::json::parse(run->environmentJson).dump(2).c_str(), run->configToml.c_str());
    return kExitOk;
}

int compareCommand(const CompareRequest &request)
{
    auto store = openStudy(request.study, "compare");
    if (!store)
        return kExitBadInput;
    std::vector<RunSummary> summaries;
    const std::vector<std::string> wanted = request.runs;
    std::vector<RunRecord> chosen;
    if (wanted.empty()) {
        std::map<std::string, size_t> newest; // a rerun replaces the earlier run of its name
        for (const auto &run : store->runs()) {
            if (newest.count(run.name))
                chosen[newest[run.name]] = run;
            else {
                newest[run.name] = chosen.size();
                chosen.push_back(run);
            }
        }
    } else {
        for (const auto &name : wanted) {
            auto run = store->findRun(name);
            if (!run) {
                std::cerr << "optlog compare: no run '" << name << "' in " << request.study << "\n";
                return kExitBadInput;
            }
            chosen.push_back(*run);
        }
    }
    if (chosen.empty()) {
        std::cerr << "optlog compare: " << request.study << " has no runs yet; `optlog study` runs the default study\n";
        return kExitBadInput;
    }
    for (const auto &run : chosen)
        summaries.push_back(summarize(*store, run));

    const RunSummary *baseline = &summaries.front();
    if (!request.baseline.empty()) {
        auto found = store->findRun(request.baseline);
        baseline = nullptr;
        for (const auto &s : summaries)
            if (found && s.run.id == found->id)
                baseline = &s;
        if (!baseline) {
            std::cerr << "optlog compare: baseline '" << request.baseline << "' is not among the compared runs\n";
            return kExitBadInput;
        }
    }
    // Each run against its own baseline where the plan names one (chunked against naive attention
    // at the same context, say), else against the study's.
    std::vector<ComparisonRow> rows;
    for (const auto &s : summaries) {
        const RunSummary *against = baseline;
        auto own = request.baselineOf.find(s.run.name);
        if (own != request.baselineOf.end())
            for (const auto &candidate : summaries)
                if (candidate.run.name == own->second)
                    against = &candidate;
        ComparisonRow row = compare(*against, {s}, request.tolerance).front();
        if (against != baseline)
            row.verdict = "vs " + against->run.name + ": " + row.verdict;
        rows.push_back(row);
    }
    std::cout << "Study " << request.study << ", baseline " << baseline->run.name << "\n"
              << formatComparison(rows, baseline->run.name, request.tolerance) << "\n"
              << formatMemoryByRole(summaries);
    return kExitOk;
}

int exportCommand(const std::string &path, const std::string &format, const std::string &output)
{
    auto store = openStudy(path, "export");
    if (!store)
        return kExitBadInput;
    std::ofstream file;
    if (!output.empty()) {
        file.open(output);
        if (!file) {
            std::cerr << "optlog export: cannot write '" << output << "'\n";
            return kExitBadInput;
        }
    }
    std::ostream &out = output.empty() ? std::cout : file;
    if (format == "csv") {
        // One row per optimizer step; val_loss is filled on the steps that were validated.
        out << "run_id,run_name,step,tokens,train_loss,learning_rate,grad_norm,step_seconds,tokens_per_second,"
               "val_loss\n";
        for (const auto &run : store->runs()) {
            std::map<int64_t, double> validation;
            for (const auto &v : store->validation(run.id))
                validation[v.step] = v.loss;
            for (const auto &m : store->metrics(run.id)) {
                out << run.id << ',' << '"' << run.name << '"' << ',' << m.step << ',' << m.tokens << ','
                    << m.trainLoss << ',' << m.learningRate << ',' << m.gradNorm << ',' << m.stepSeconds << ','
                    << m.tokensPerSecond << ',';
                if (validation.count(m.step))
                    out << validation[m.step];
                out << '\n';
            }
        }
        return kExitOk;
    }
    nlohmann::json runs = nlohmann::json::array();
    for (const auto &run : store->runs()) {
        nlohmann::json r = {{"id", run.id}, {"name", run.name}, {"status", run.isFinished() ? "finished" : "running"}, {"outcome", run.outcome ? outcomeName(*run.outcome) : ""},
                            {"outcome_step", run.outcomeStep}, {"message", run.message},
                            {"created_at", run.createdAt}, {"finished_at", run.finishedAt},
                            {"config_toml", run.configToml}};
        r["environment"] = run.environmentJson.empty() ? nlohmann::json() : nlohmann::json::parse(run.environmentJson);
        for (const auto &m : store->metrics(run.id))
            r["metrics"].push_back({{"step", m.step}, {"tokens", m.tokens}, {"train_loss", m.trainLoss},
                                    {"learning_rate", m.learningRate}, {"grad_norm", m.gradNorm},
                                    {"step_seconds", m.stepSeconds}, {"tokens_per_second", m.tokensPerSecond}});
        for (const auto &v : store->validation(run.id))
            r["validation"].push_back({{"step", v.step}, {"tokens", v.tokens}, {"loss", v.loss}});
        for (const auto &m : store->memory(run.id))
            r["memory"].push_back({{"role", memoryRoleName(m.role)}, {"dtype", m.dtype}, {"bytes", m.bytes},
                                   {"source", memorySourceName(m.source)}});
        for (const auto &e : store->events(run.id))
            r["events"].push_back({{"at", e.at}, {"kind", eventKindName(e.kind)}, {"message", e.message}});
        runs.push_back(r);
    }
    out << nlohmann::json{{"study", path}, {"schema_version", store->schemaVersion()}, {"runs", runs}}.dump(2) << "\n";
    return kExitOk;
}

} // namespace optlog
