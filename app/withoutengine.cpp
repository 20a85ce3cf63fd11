// SPDX-License-Identifier: MIT
// optlog's side of app/enginework.h: it links no LibTorch. A command that trains or measures goes
// to optlog-engine where that is installed; without it, the work that needs LibTorch says which
// package brings it, and nothing is written.
#include "app/commands.h"
#include "app/enginework.h"
#include "app/launcher.h"
#include "core/config/config.h"
#include "core/contract/outcome.h"
#include "core/contract/program.h"
#include "core/memorymodel/memorymodel.h"
#include "optlog_version.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <iterator>

#include <unistd.h>

namespace optlog {

namespace {

// The commands optlog-engine runs whole where it is installed: those that train or measure, and
// those whose answer depends on the engine (an estimate calibrated on this device, a TorchScript
// module's check, a host's description of its machine), so that with both packages installed each
// behaves exactly as the engine's own. --version describes the engine's build.
constexpr const char *kEngineCommands[] = {"run",      "study",  "tune", "fit",      "estimate",
                                           "quantize", "record", "host", "--version"};

} // namespace

void handToEngine(char **argv)
{
    if (!argv[1] || std::none_of(std::begin(kEngineCommands), std::end(kEngineCommands), [&](const char *name) {
            return std::strcmp(argv[1], name) == 0;
        }))
        return;
    const std::string engine = installedEngine(selfPath(argv[0]));
    if (engine.empty())
        return; // this optlog does what it can without it (refuseWithoutEngine)
    execv(engine.c_str(), argv);
    std::fprintf(stderr, "optlog: could not start %s: %s\n", engine.c_str(), std::strerror(errno));
    std::_Exit(kExitFailed);
}

int refuseWithoutEngine(const std::string &command)
{
    std::fprintf(stderr,
                 "optlog %s: this needs optlog's engine (LibTorch), which is not installed here: install the "
                 "package optlog-engine (apt install optlog-engine); runs train on another machine with "
                 "`optlog run --host` (docs/remote.md); nothing was written\n",
                 command.c_str());
    return kExitBadInput;
}

std::string buildLine()
{
    return std::string("optlog ") + OPTLOG_VERSION + " (commit " + OPTLOG_GIT_DESCRIBE
           + "), without its engine: no LibTorch; `optlog run` here needs the package optlog-engine";
}

int runHere(RunRequest &, const RunOptions &, const Invocation &)
{
    return refuseWithoutEngine("run");
}
int tuneCommand(const TuneRequest &, const std::string &)
{
    return refuseWithoutEngine("tune");
}
int peakCommand(const TuneRequest &)
{
    return refuseWithoutEngine("tune");
}
int gemmCheckCommand()
{
    return refuseWithoutEngine("tune");
}
int fitCommand(const FitRequest &, const Invocation &)
{
    return refuseWithoutEngine("fit");
}
int quantizeCommand(const QuantizeRequest &)
{
    return refuseWithoutEngine("quantize");
}
int hostDescribeCommand()
{
    return refuseWithoutEngine("host describe");
}

// Without LibTorch the built-in model's memory is predicted as the workbench's Design page predicts
// it: by the memory model with its default terms for the device, not calibrated on this machine's
// (calibrating measures tensors). A TorchScript module's needs its probes, and a GPU's terms the
// engine's LibTorch: those are the engine's.
int estimateCommand(const EstimateRequest &request)
{
    RunConfig config;
    if (const int refused = refuseBadInput("estimate", [&] {
            config = loadRunConfig(request.preset, request.configFile, request.overrides);
        }))
        return refused;
    if (config.model.source != ModelSource::Builtin || !request.computeCapability.empty())
        return refuseWithoutEngine("estimate");
    if (request.checkApplicable) { // the built-in model takes every valid config
        std::cout << nlohmann::json{{"applicable", true}}.dump() << "\n";
        return kExitOk;
    }
    const MemoryEstimate estimate = estimateMemory(config);
    std::cerr << "optlog estimate: the memory model's default terms for the device, not calibrated on this "
                 "machine's (that needs optlog-engine)\n";
    std::cout << (request.json ? formatEstimateJson(config, estimate, request.ranks)
                               : formatEstimate(config, estimate, request.ranks));
    return kExitOk;
}

nlohmann::json recordedMatmulPeak(const nlohmann::json &)
{
    return {{"not_measured", "no matmul peak is measured here: that needs optlog-engine (install the package, then "
                             "`optlog tune --peak-only`), for the runs recorded after"}};
}

// The machine that trains the run loads its module and refuses a config it cannot take, before
// anything is written there.
void requireModelTakes(const RunConfig &) { }

std::string resumableShard(const Store &, const PlannedRun &)
{
    return "";
}

} // namespace optlog
