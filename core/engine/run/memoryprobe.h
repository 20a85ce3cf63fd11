// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"
#include "core/memorymodel/memorymodel.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace optlog {

// Bytes of one role over a step as c0 + c1·T + c2·B·T + c3·B·T², for microbatch B and context T:
// linear in the microbatch, linear and quadratic in the context (naive attention's T x T scores).
struct ActivationFit
{
    std::array<double, 4> coefficients{};
    int64_t at(int64_t microbatch, int64_t context) const;
};

// One short training run of the module at a small size, and what it measured. Its temporaries are
// the larger of the passes' (backward's transients, which grow with the batch) and the optimizer
// step's (FP32 master gradients, say, fixed by the parameters).
struct MemoryProbe
{
    int64_t microbatch = 0, context = 0;
    int64_t savedActivations = 0, temporaries = 0, peak = 0;
    int64_t passTemporaries = 0; // over the forward and backward passes only
};

// What probing a TorchScript module found, for one precision mode and checkpointing setting.
struct ProbedMemory
{
    std::string sha256;                  // of the module file
    std::vector<int64_t> parameterSizes; // elements of each parameter, in the module's order
    int64_t blocks = 0;                  // of the contract's optional part
    std::vector<MemoryProbe> probes;
    ActivationFit savedActivations, passTemporaries;
    // The optimizer step's bytes above the model state, where its peak was above the passes': the
    // step runs after the saved activations are freed.
    int64_t stepTemporaries = 0;
    // Temporaries at this size (the peak less model state and saved activations): the passes' fit,
    // or the optimizer step's where it reaches higher.
    int64_t temporariesAt(int64_t microbatch, int64_t context) const;
    bool fromCache = false;
};

// The memory of a model optlog has never seen (model.source = "torchscript"), by probing it: the
// module is trained for a few steps at microbatches 1 and 2 and contexts T/4, T/2 and T of the
// config's, in its precision mode, checkpointing and device, and each role fitted to ActivationFit's
// terms (temporaries as MemoryProbe says). The probes are cached ($XDG_CACHE_HOME/optlog/torchscript-probes.json) by the module file's
// SHA-256 with the mode, checkpointing and device; a changed file is probed again. Refuses a module
// that breaks the contract (InputError) before probing it.
ProbedMemory probeMemory(const RunConfig &config);

// Three steps of `config`'s model at this microbatch and context (one of warm-up, nothing written),
// measured as a run is: what probeMemory fits to, and what a prediction is checked against.
struct TokenSplit;
MemoryProbe measureShortRun(const RunConfig &config, const TokenSplit &data, int64_t microbatch, int64_t context);

// The run's memory by role: the model state exactly from the parameter sizes (modelStateEstimate),
// saved activations and temporaries from the fit at the config's microbatch and context.
MemoryEstimate probedEstimate(const RunConfig &config, const ProbedMemory &probed, int64_t rank = 0);

// The prediction for any config: the memory model's for optlog's GPT; for a TorchScript module,
// its probes' (probed, or read from the cache, once per setting, then kept).
class MemoryPredictor
{
public:
    MemoryEstimate operator()(const RunConfig &config);

private:
    std::map<std::string, ProbedMemory> m_probed; // by precision mode and checkpointing
};

} // namespace optlog
