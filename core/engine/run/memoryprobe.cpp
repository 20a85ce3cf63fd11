// SPDX-License-Identifier: MIT
#include "core/engine/run/memoryprobe.h"

#include "core/contract/format.h"
#include "core/contract/inputerror.h"
#include "core/engine/data/textdata.h"
#include "core/engine/machine/environment.h"
#include "core/engine/memory/countingallocator.h"
#include "core/engine/model/scriptedmodel.h"
#include "core/engine/precision/precision.h"
#include "core/engine/train/trainer.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <atomic>
#include <chrono>

namespace optlog {

namespace {

constexpr int kTerms = int(std::tuple_size_v<decltype(ActivationFit::coefficients)>);
constexpr int64_t kBatchesPerShape = 4;   // at the largest fitted shape, to see what the data changes
constexpr int64_t kHeldOutMicrobatch = 4; // at the longest context, to check the fit where it did not look

// The least-squares coefficients of a role over the probes' terms; a term the probes cannot tell
// apart from the others (one context only, say) gets 0, as does the T² shared by the batch where
// `sharedSquare` is false.
ActivationFit fitted(const std::vector<MemoryProbe> &probes, int64_t MemoryProbe::*role, bool sharedSquare)
{
    const int64_t n = int64_t(probes.size());
    at::Tensor terms = at::zeros({n, kTerms}, at::kDouble), values = at::zeros({n, 1}, at::kDouble);
    for (int64_t i = 0; i < n; ++i) {
        const auto row = ActivationFit::terms(probes[size_t(i)].microbatch, probes[size_t(i)].context);
        for (int j = 0; j < kTerms; ++j)
            if (sharedSquare || size_t(j) != ActivationFit::kSharedSquare)
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

// A role's fit, with the T² that no microbatch multiplies only where the held-out probe says it
// is there: it must halve the error at that shape, which the fit did not see. A dense model's
// attention grows with B·T², and its fit stays as it was.
ActivationFit chosenFit(const ProbedMemory &probed, int64_t MemoryProbe::*role)
{
    const ActivationFit perSequence = fitted(probed.probes, role, false);
    const ActivationFit shared = fitted(probed.probes, role, true);
    const auto error = [&](const ActivationFit &fit) {
        return std::abs(double(fit.at(probed.heldOut.microbatch, probed.heldOut.context) - probed.heldOut.*role));
    };
    return error(shared) < error(perSequence) / 2 ? shared : perSequence;
}

} // namespace

RunConfig shortRunConfig(const RunConfig &config, int64_t microbatch, int64_t context)
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
    return small;
}

MemoryProbe measureShortRun(const RunConfig &config, const TokenSplit &data, int64_t microbatch, int64_t context)
{
    const RunConfig small = shortRunConfig(config, microbatch, context);
    TrainingOutcome outcome;
    try {
        Trainer trainer(small, data, 1);
        TrainingObserver quiet;
        const std::atomic<bool> never{false};
        outcome = trainer.run(quiet, never);
    } catch (const InputError &) {
        throw;
    } catch (const std::exception &e) {
        const std::string what = config.model.source == ModelSource::TorchScript
                                     ? "the TorchScript module '" + config.model.path
                                           + "' fails in a probe of its memory"
                                     : "the device calibration's probe of the built-in GPT fails";
        throw InputError(what + " (" + std::to_string(microbatch) + " sequences of " + std::to_string(context)
                         + " tokens, precision.mode = \"" + config.precision.mode + "\", runtime.device = \""
                         + config.runtime.device + "\"): " + torchErrorLine(e.what()));
    }
    MemoryProbe result{microbatch, context, 0, 0, 0, 0, 0};
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
    // The first measured step's passes, then its optimizer step; past the passes the saved
    // activations are freed, so the step's bytes above the state are its own. Where a later step
    // reached higher still, its passes did (its batch; the optimizer step is the same each time).
    const int64_t firstPasses = outcome.passPeakBytes.value_or(result.peak);
    const int64_t firstStep = outcome.firstStepPeakBytes.value_or(firstPasses);
    const int64_t passes = result.peak > std::max(firstPasses, firstStep) ? result.peak : firstPasses;
    result.passTemporaries = std::max<int64_t>(0, passes - persistent - result.savedActivations);
    if (firstStep > firstPasses)
        result.stepTemporaries = firstStep - persistent;
    return result;
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
    if (auto cached = readCachedProbes(config, probed.sha256);
        cached && cached->parameterSizes == probed.parameterSizes) {
        cached->blocks = probed.blocks;
        return *cached;
    }

    CountingAllocator::install(); // the probes measure what the run's allocator would count
    const int64_t T = config.model.contextLength;
    std::vector<int64_t> contexts = {std::max<int64_t>(1, T / 4), std::max<int64_t>(1, T / 2), T};
    contexts.erase(std::unique(contexts.begin(), contexts.end()), contexts.end());
    const TokenSplit data = loadTokens(config.data, config.model.vocabSize, T);
    for (const int64_t context : contexts)
        for (const int64_t microbatch : {1, 2})
            probed.probes.push_back(measureShortRun(config, data, microbatch, context));
    // The largest fitted shape over other batches: a mixture of experts routes each batch's tokens
    // differently, and a budget needs the worst.
    for (int64_t other = 1; other < kBatchesPerShape; ++other) {
        RunConfig reseeded = config;
        reseeded.train.seed = config.train.seed + other;
        probed.replicates.push_back(measureShortRun(reseeded, data, 2, T));
    }
    probed.heldOut = measureShortRun(config, data, kHeldOutMicrobatch, T);
    probed.savedActivations = chosenFit(probed, &MemoryProbe::savedActivations);
    probed.passTemporaries = chosenFit(probed, &MemoryProbe::passTemporaries);
    for (const auto &p : probed.probes)
        probed.stepTemporaries = std::max(probed.stepTemporaries, p.stepTemporaries);

    writeCachedProbes(config, probed);
    return probed;
}

DeviceCalibration calibrateDevice(const RunConfig &config, const DeviceTerms &device)
{
    // On a CPU, the path of the products too: their temporaries differ (ATen's copies of strided
    // operands, the primitive's scratchpad, sgemm's widened tiles). A stale entry is probed again,
    // as a missing one.
    const at::ScalarType compute = precisionPlan(config.precision.mode).compute;
    const std::string where = device.describe()
                              + (device.device == "cpu"
                                     ? ", products on " + pathName(runProductPaths(config.runtime, compute).of(compute))
                                     : std::string());
    if (auto cached = readCachedCalibration(where, config.precision.mode, device.workspaceSource))
        return *cached;
    CountingAllocator::install(); // the probes measure what the run's allocator would count
    RunConfig probe = config;
    probe.model.source = ModelSource::Builtin;
    probe.model.path.clear();
    probe.model.layers = 2;
    probe.model.heads = 4;
    probe.model.dropout = 0;
    probe.memory.attention = Attention::Naive;
    probe.memory.checkpointEvery = 0;
    int64_t longest = 0;
    for (const auto &shape : kCalibrationShapes)
        longest = std::max(longest, shape.context);
    probe.model.contextLength = longest;

    DeviceCalibration calibration;
    calibration.device = where;
    calibration.precisionMode = config.precision.mode;
    calibration.environment = device.workspaceSource;
    const auto started = std::chrono::steady_clock::now();
    const TokenSplit data = loadTokens(probe.data, probe.model.vocabSize, longest);
    const int64_t workspaces = device.workspaceBytes();
    for (const auto &[width, microbatch, context] : kCalibrationShapes) {
        probe.model.width = width;
        const RunConfig shortRun = shortRunConfig(probe, microbatch, context);
        const MemoryProbe measured = measureShortRun(probe, data, microbatch, context);
        const MemoryEstimate predicted = estimateMemory(shortRun, device);
        const auto bytes = [&predicted](MemoryRole role) { return predicted.find(role)->bytes; };
        calibration.probes.push_back({width, microbatch, context, predicted.stateBytes(),
                                      bytes(MemoryRole::SavedActivations), bytes(MemoryRole::Temporaries) - workspaces,
                                      predicted.peakBytes, measured.savedActivations, measured.temporaries - workspaces,
                                      measured.peak});
        calibration.probeTokens += shortRun.train.steps * microbatch * context;
    }
    calibration.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    calibration = fitCalibration(calibration);
    writeCachedCalibration(calibration);
    return calibration;
}

MemoryPredictor::MemoryPredictor(DeviceTerms device)
    : m_device(std::move(device))
{ }

MemoryEstimate MemoryPredictor::operator()(const RunConfig &config)
{
    if (config.model.source == ModelSource::Builtin) {
        MemoryEstimate estimate = estimateMemory(config, m_device);
        if (!m_device.onThisMachine)
            return estimate;
        auto found = m_calibrations.find(config.precision.mode);
        if (found == m_calibrations.end())
            found = m_calibrations.emplace(config.precision.mode, calibrateDevice(config, m_device)).first;
        return calibrated(estimate, found->second);
    }
    const std::string setting = probeSetting(config) + ", T " + std::to_string(config.model.contextLength);
    auto found = m_probed.find(setting);
    if (found == m_probed.end())
        found = m_probed.emplace(setting, probeMemory(config)).first;
    MemoryEstimate estimate = probedEstimate(config, found->second);
    estimate.device = m_device;
    return estimate;
}

} // namespace optlog
