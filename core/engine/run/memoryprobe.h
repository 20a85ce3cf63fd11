// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"
#include "core/memorymodel/probedmemory.h"

#include <cstdint>
#include <map>
#include <string>

namespace optlog {

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
