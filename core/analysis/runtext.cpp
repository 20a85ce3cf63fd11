// SPDX-License-Identifier: MIT
#include "core/analysis/runtext.h"

#include "core/config/config.h"
#include "core/config/configfields.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

namespace optlog {

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

} // namespace optlog
