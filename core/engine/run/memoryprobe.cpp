// SPDX-License-Identifier: MIT
#include "core/engine/run/memoryprobe.h"

#include "core/config/cachefile.h"
#include "core/contract/format.h"
#include "core/contract/inputerror.h"
#include "core/engine/memory/countingallocator.h"
#include "core/engine/model/scriptedmodel.h"
#include "core/engine/train/trainer.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <atomic>
#include <cmath>

namespace optlog {

namespace {

constexpr const char *kCacheFile = "torchscript-probes.json";
constexpr int kTerms = 4;

std::array<double, kTerms> termsAt(double microbatch, double context)
{
    return {1.0, context, microbatch * context, microbatch * context * context};
}

// The least-squares coefficients of `values` over the probes' terms; a term the probes cannot
// tell apart from the others (one context only, say) gets 0.
ActivationFit fitted(const std::vector<MemoryProbe> &probes, int64_t MemoryProbe::*role)
{
    const int64_t n = int64_t(probes.size());
    at::Tensor terms = at::zeros({n, kTerms}, at::kDouble), values = at::zeros({n, 1}, at::kDouble);
    for (int64_t i = 0; i < n; ++i) {
        const auto row = termsAt(double(probes[size_t(i)].microbatch), double(probes[size_t(i)].context));
        for (int j = 0; j < kTerms; ++j)
            terms[i][j] = row[size_t(j)];
        values[i][0] = double(probes[size_t(i)].*role);
    }
    // Scaled columns, so that T² and 1 weigh alike in the solve.
    const at::Tensor scale = terms.abs().amax(0).clamp_min(1.0);
    const at::Tensor solution = std::get<0>(at::linalg_lstsq(terms / scale, values)).squeeze(1) / scale;
    ActivationFit fit;
    for (int j = 0; j < kTerms; ++j)
        fit.coefficients[size_t(j)] = solution[j].item<double>();
    return fit;
}

std::string settingKey(const RunConfig &config)
{
    return config.precision.mode + ", checkpoint_every " + std::to_string(config.memory.checkpointEvery) + ", "
           + config.runtime.device;
}

nlohmann::json toJson(const ProbedMemory &probed)
{
    nlohmann::json probes = nlohmann::json::array();
    for (const auto &p : probed.probes)
        probes.push_back({p.microbatch, p.context, p.savedActivations, p.temporaries, p.peak, p.passTemporaries});
    return {{"probes", probes},
            {"saved_activations", probed.savedActivations.coefficients},
            {"pass_temporaries", probed.passTemporaries.coefficients},
            {"step_temporaries", probed.stepTemporaries}};
}

// The cached probes of this setting, when the cache has them for these parameter sizes.
bool readCached(const nlohmann::json &module, const std::string &setting, ProbedMemory &probed)
{
    try {
        if (module.at("parameter_sizes").get<std::vector<int64_t>>() != probed.parameterSizes)
            return false;
        const nlohmann::json &entry = module.at("settings").at(setting);
        for (const auto &p : entry.at("probes"))
            probed.probes.push_back({p.at(0).get<int64_t>(), p.at(1).get<int64_t>(), p.at(2).get<int64_t>(),
                                     p.at(3).get<int64_t>(), p.at(4).get<int64_t>(), p.at(5).get<int64_t>()});
        probed.savedActivations.coefficients = entry.at("saved_activations").get<std::array<double, kTerms>>();
        probed.passTemporaries.coefficients = entry.at("pass_temporaries").get<std::array<double, kTerms>>();
        probed.stepTemporaries = entry.at("step_temporaries").get<int64_t>();
        return true;
    } catch (const nlohmann::json::exception &) {
        probed.probes.clear(); // a damaged entry is probed again
        return false;
    }
}

} // namespace

MemoryProbe measureShortRun(const RunConfig &config, const TokenSplit &data, int64_t microbatch, int64_t context)
{
    RunConfig small = config;
    small.train.microbatch = microbatch;
    small.train.accumulation = 1;
    small.train.steps = 3;
    small.train.evalInterval = 1000000;
    small.train.checkpointInterval = 0;
    small.memory.warmupSteps = 1;
    small.memory.budget.clear();
    small.model.contextLength = context;
    small.data.evalSequences = 1;
    small.diagnostics.numerics = false;
    small.distributed.ranks = 1;
    small.distributed.zeroStage = 0;
    small.runtime.speedProbeEvery = 0;
    TrainingOutcome outcome;
    try {
        Trainer trainer(small, data, 1);
        TrainingObserver quiet;
        const std::atomic<bool> never{false};
        outcome = trainer.run(quiet, never);
    } catch (const InputError &) {
        throw;
    } catch (const std::exception &e) {
        throw InputError("the TorchScript module '" + config.model.path + "' fails in a probe of its memory ("
                         + std::to_string(microbatch) + " sequences of " + std::to_string(context)
                         + " tokens, precision.mode = \"" + config.precision.mode
                         + "\"): " + std::string(e.what()).substr(0, std::string(e.what()).find('\n')));
    }
    MemoryProbe result{microbatch, context, 0, 0, 0, 0};
    int64_t persistent = 0;
    for (const auto &row : outcome.measuredMemory) {
        if (row.role == MemoryRole::Parameters || row.role == MemoryRole::Gradients
            || row.role == MemoryRole::OptimizerState || row.role == MemoryRole::MasterWeights)
            persistent += row.bytes;
        if (row.role == MemoryRole::SavedActivations)
            result.savedActivations = row.bytes;
        if (row.role == MemoryRole::Temporaries)
            result.temporaries = row.bytes;
        if (row.role == MemoryRole::Peak)
            result.peak = row.bytes;
    }
    result.passTemporaries = std::max<int64_t>(0, outcome.passPeakBytes.value_or(result.peak) - persistent
                                                      - result.savedActivations);
    return result;
}

int64_t ActivationFit::at(int64_t microbatch, int64_t context) const
{
    const auto terms = termsAt(double(microbatch), double(context));
    double bytes = 0;
    for (int j = 0; j < kTerms; ++j)
        bytes += coefficients[size_t(j)] * terms[size_t(j)];
    return std::max<int64_t>(0, std::llround(bytes));
}

ProbedMemory probeMemory(const RunConfig &config)
{
    ProbedMemory probed;
    {
        const ScriptedModel module(config); // the contract, before anything is probed
        probed.sha256 = module.fileSha256();
        probed.blocks = module.blockCount();
        for (const auto &[name, tensor] : module.namedParameters())
            probed.parameterSizes.push_back(tensor.numel());
    }
    const std::string path = cacheFilePath(kCacheFile), setting = settingKey(config);
    nlohmann::json cache = readJsonCache(path);
    if (cache.contains(probed.sha256) && readCached(cache[probed.sha256], setting, probed)) {
        probed.fromCache = true;
        return probed;
    }

    CountingAllocator::install(); // the probes measure what the run's allocator would count
    const int64_t T = config.model.contextLength;
    std::vector<int64_t> contexts = {std::max<int64_t>(1, T / 4), std::max<int64_t>(1, T / 2), T};
    contexts.erase(std::unique(contexts.begin(), contexts.end()), contexts.end());
    const TokenSplit data = loadTokens(config.data, config.model.vocabSize, T);
    for (const int64_t context : contexts)
        for (const int64_t microbatch : {1, 2})
            probed.probes.push_back(measureShortRun(config, data, microbatch, context));
    probed.savedActivations = fitted(probed.probes, &MemoryProbe::savedActivations);
    probed.passTemporaries = fitted(probed.probes, &MemoryProbe::passTemporaries);
    for (const auto &p : probed.probes)
        if (p.temporaries > p.passTemporaries)
            probed.stepTemporaries = std::max(probed.stepTemporaries, p.savedActivations + p.temporaries);

    nlohmann::json &module = cache[probed.sha256];
    module["parameter_sizes"] = probed.parameterSizes;
    module["settings"][setting] = toJson(probed);
    writeJsonCache(path, cache);
    return probed;
}

int64_t ProbedMemory::temporariesAt(int64_t microbatch, int64_t context) const
{
    return std::max(passTemporaries.at(microbatch, context), stepTemporaries - savedActivations.at(microbatch, context));
}

MemoryEstimate MemoryPredictor::operator()(const RunConfig &config)
{
    if (config.model.source == "builtin")
        return estimateMemory(config);
    const std::string setting = settingKey(config) + ", T " + std::to_string(config.model.contextLength);
    auto found = m_probed.find(setting);
    if (found == m_probed.end())
        found = m_probed.emplace(setting, probeMemory(config)).first;
    return probedEstimate(config, found->second);
}

MemoryEstimate probedEstimate(const RunConfig &config, const ProbedMemory &probed, int64_t rank)
{
    MemoryEstimate e = modelStateEstimate(config, probed.parameterSizes, rank);
    const int64_t B = config.train.microbatch, T = config.model.contextLength;
    const std::string fit = "fitted to " + std::to_string(probed.probes.size()) + " probes of the module";
    e.roles.push_back({MemoryRole::SavedActivations, "mixed", 0, probed.savedActivations.at(B, T), fit});
    e.roles.push_back({MemoryRole::Temporaries, "mixed", 0,
                       probed.temporariesAt(B, T) + (config.train.accumulation - 1) * 2 * B * T * 8, fit});
    e.activationsPredicted = true;
    e.peakBytes = 0;
    for (const auto &r : e.roles)
        e.peakBytes += r.bytes;
    e.source = "probes of the TorchScript module (sha256 " + probed.sha256.substr(0, 16) + ", "
               + std::to_string(probed.probes.size()) + " short runs at microbatch 1 and 2, contexts up to "
               + std::to_string(T) + (probed.fromCache ? "; cached" : "") + ")";
    return e;
}

} // namespace optlog
