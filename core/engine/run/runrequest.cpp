// SPDX-License-Identifier: MIT
#include "core/engine/run/runrequest.h"

#include "core/config/configerror.h"
#include "core/contract/format.h"
#include "core/contract/inputerror.h"
#include "core/engine/model/languagemodel.h"
#include "core/engine/model/weightfiles.h"
#include "core/engine/precision/precision.h"
#include "core/engine/run/enginerun.h"
#include "core/engine/run/storedweights.h"
#include "core/store/weights.h"

#include <torch/serialize/input-archive.h>

#include <filesystem>

namespace optlog {

namespace {

// Whether the weights file at `path` is whole and fits the model `config` describes: loadVerified,
// then the weights into a model built from the config. Writes nothing.
void checkWeightsFitConfig(const RunConfig &config, const std::string &path, const WeightFile &recorded)
{
    verifyWeightFile(path, recorded);
    const std::shared_ptr<LanguageModel> model = makeLanguageModel(config);
    model->moveTo(c10::Device(c10::kCPU), precisionPlan(config.precision.mode).weights);
    torch::serialize::InputArchive archive;
    model->readWeights(archive, path);
}

// A TorchScript run resumes the module it started with: its code is in model.path's file, which
// may have changed since (weights that fit another module's shapes would train other code).
void checkSameModule(const RunConfig &config, const RunRecord &run, const std::string &label)
{
    if (config.model.source != ModelSource::TorchScript)
        return;
    const nlohmann::json environment = nlohmann::json::parse(run.environmentJson, nullptr, false);
    const std::string recorded = environment.is_object()
                                     ? environment.value("/torchscript_model/sha256"_json_pointer, std::string())
                                     : std::string();
    std::error_code error;
    const std::string now = std::filesystem::is_regular_file(config.model.path, error) ? sha256OfFile(config.model.path)
                                                                                       : std::string("(no such file)");
    if (recorded.empty() || now != recorded)
        throw InputError("--resume: " + label + " trained the TorchScript module '" + config.model.path
                         + "' with SHA-256 " + (recorded.empty() ? std::string("(not recorded)") : recorded)
                         + ", and the file is now " + now
                         + ": it changed after the run started. Put the module back as it was, or start a new run "
                           "from its config (optlog run --from)");
}

} // namespace

SourceRun sourceRunOf(const std::string &from)
{
    const size_t colon = from.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == from.size())
        throw StoreError("--from " + from + ": write STUDY:RUN, such as study.sqlite:fp32 or study.sqlite:3");
    const std::string study = from.substr(0, colon), name = from.substr(colon + 1);
    const Store store(study, Store::Access::ReadOnly);
    const RunRecord run = store.requireRunNamed(name);
    std::error_code error;
    const std::string absolute = std::filesystem::absolute(study, error).lexically_normal().string();
    return {{absolute, run.id, run.name}, run.configToml};
}

Resumption resumptionOf(const RunRequest &request)
{
    if (!request.preset.empty() || !request.configFile.empty() || !request.overrides.empty() || !request.from.empty()
        || request.repeats != 1)
        throw ConfigError("--resume continues a run with its own config; leave out --preset, --config, --set, "
                          "--memory-budget, --from and --repeats");
    const Store store(request.study); // marks a run whose engine died as crashed first
    const RunRecord run = store.requireRunNamed(request.resume);
    const std::string label = "run " + std::to_string(run.id) + " (" + printable(run.name) + ")";
    if (!run.isFinished())
        throw StoreError("--resume: " + label + " is still running; resume it after it has stopped");
    if (*run.outcome == Outcome::Completed)
        throw StoreError("--resume: " + label + " completed; to train it longer, `optlog run --from " + request.study
                         + ":" + std::to_string(run.id) + " --set train.steps=N` starts a longer run from its config");
    if (*run.outcome == Outcome::Diverged || *run.outcome == Outcome::Oom)
        throw StoreError("--resume: " + label + " ended " + outcomeName(*run.outcome)
                         + "; resuming it would meet the same end. Change its config and run it again with --from");
    const std::optional<WeightFile> last = latestCheckpoint(store, run.id);
    if (!last)
        throw StoreError("--resume: " + label
                         + " has no checkpoint to resume from (it stopped before writing one: "
                           "set train.checkpoint_interval to write one every so many steps)");
    // A damaged checkpoint, or one that does not fit the stored config, refuses before the run is touched.
    const RunConfig config = loadDerivedConfig(run.configToml, label, {});
    checkSameModule(config, run, label);
    checkWeightsFitConfig(config, store.absolutePath(last->path), *last);
    return {run, *last};
}

namespace {

// The stored run's config with the request's overrides; a preset or a file is refused beside --from.
RunConfig derivedConfig(const SourceRun &source, const RunRequest &request)
{
    if (!request.preset.empty() || !request.configFile.empty())
        throw ConfigError("--from takes the stored run's config; change its fields with --set, without --preset "
                          "or --config");
    return loadDerivedConfig(source.configToml,
                             "run " + std::to_string(source.origin.runId) + " of " + source.origin.study,
                             request.overrides);
}

} // namespace

ResolvedRun resolveRun(const RunRequest &request)
{
    ResolvedRun resolved;
    if (!request.resume.empty()) {
        resolved.resumption = resumptionOf(request);
        const RunRecord &run = resolved.resumption->run;
        resolved.config = loadDerivedConfig(run.configToml, "run " + std::to_string(run.id) + " of " + request.study,
                                            {});
    } else if (!request.from.empty()) {
        resolved.source = sourceRunOf(request.from);
        resolved.config = derivedConfig(*resolved.source, request);
    } else {
        resolved.config = loadRunConfig(request.preset, request.configFile, request.overrides);
    }
    return resolved;
}

std::unique_ptr<EngineRun> engineRunFor(const ResolvedRun &resolved, bool force)
{
    auto run = std::make_unique<EngineRun>(resolved.config, force ? EngineRun::PreflightCheck::Force
                                                                  : EngineRun::PreflightCheck::Refuse);
    if (resolved.resumption)
        run->resumeFrom(resolved.resumption->run.id, resolved.resumption->checkpoint);
    if (resolved.source)
        run->setOrigin(resolved.source->origin);
    return run;
}

std::optional<Rendezvous> rankZeroRendezvous(const RunRequest &request, const RunConfig &config)
{
    if (config.distributed.ranks <= 1 && request.rendezvous.empty() && request.rank < 0 && request.worldSize <= 0)
        return std::nullopt;
    if (!request.resume.empty())
        throw ConfigError("--resume: a run over several ranks cannot be resumed yet");
    if (request.rendezvous.empty()) {
        if (request.rank >= 0 || request.worldSize > 0)
            throw ConfigError("--rank and --world-size go with --rendezvous HOST:PORT");
        return Rendezvous{"127.0.0.1", 0, 0, config.distributed.ranks};
    }
    if (request.worldSize != config.distributed.ranks)
        throw ConfigError("--world-size " + std::to_string(request.worldSize) + " but the run's distributed.ranks = "
                          + std::to_string(config.distributed.ranks) + ": give both the same number");
    return parseRendezvous(request.rendezvous, 0, request.worldSize);
}

Rendezvous joinedRankRendezvous(const RunRequest &request)
{
    if (!request.preset.empty() || !request.configFile.empty() || !request.overrides.empty() || !request.from.empty()
        || !request.resume.empty() || !request.study.empty() || request.repeats != 1)
        throw ConfigError("--rank 1 and above take the run from rank 0; leave out --db, --preset, --config, --set, "
                          "--from, --resume and --repeats");
    return parseRendezvous(request.rendezvous, request.rank, request.worldSize);
}

} // namespace optlog
