// SPDX-License-Identifier: MIT
// `optlog estimate`: memory by role, predicted with the memory model calibrated on this machine's
// device, and whether a run's model can take a config.
#include "app/commands.h"
#include "app/enginework.h"
#include "core/config/config.h"
#include "core/contract/inputerror.h"
#include "core/engine/machine/device.h"
#include "core/engine/model/languagemodel.h"
#include "core/engine/run/memoryprobe.h"
#include "core/memorymodel/memorymodel.h"

#include <nlohmann/json.hpp>

#include <iostream>
#include <optional>

namespace optlog {

namespace {

// `optlog estimate --check-applicable`: whether the run's model can take the config, for the
// workbench's queue, which links no LibTorch to load a module with (ui/moduleprobe.h). A setting the
// model cannot take is an answer, {"applicable": false, "field", "reason"}; a broken module or
// config is bad input, as anywhere else.
int applicabilityCommand(const EstimateRequest &request)
{
    nlohmann::json verdict = {{"applicable", true}};
    if (const int refused = refuseBadInput("estimate", [&] {
            try {
                requireModelTakes(loadRunConfig(request.preset, request.configFile, request.overrides));
            } catch (const NotApplicable &e) {
                verdict = {{"applicable", false}, {"field", e.field()}, {"reason", e.what()}};
            }
        }))
        return refused;
    std::cout << verdict.dump() << "\n";
    return kExitOk;
}

} // namespace

int estimateCommand(const EstimateRequest &request)
{
    if (request.checkApplicable)
        return applicabilityCommand(request);
    RunConfig config;
    MemoryEstimate estimate;
    if (const int refused = refuseBadInput("estimate", [&] {
            config = loadRunConfig(request.preset, request.configFile, request.overrides);
            std::optional<ComputeCapability> capability;
            if (!request.computeCapability.empty()) {
                capability = ComputeCapability::parse(request.computeCapability);
                if (!capability || config.runtime.device != "cuda")
                    throw InputError("--compute-capability \"" + request.computeCapability + "\": "
                                     + (capability ? "names a GPU's chip, so it needs --set runtime.device=cuda"
                                                   : "expected MAJOR.MINOR such as 9.0 (H100, H200) or 8.0 (A100)"));
            }
            // On this machine's device the memory model is calibrated (once, then cached); a
            // TorchScript module is probed (or its cached probes read): it must keep its contract.
            MemoryPredictor predict(deviceTermsOf(config, capability));
            estimate = predict(config);
        }))
        return refused;
    std::cout << (request.json ? formatEstimateJson(config, estimate, request.ranks)
                               : formatEstimate(config, estimate, request.ranks));
    return kExitOk;
}

} // namespace optlog
