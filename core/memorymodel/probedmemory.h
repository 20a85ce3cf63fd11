// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"
#include "core/memorymodel/memorymodel.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace optlog {

// Bytes of one role over a step as c0 + c1·T + c2·B·T + c3·B·T², for microbatch B and context T:
// linear in the microbatch, linear and quadratic in the context (naive attention's T x T scores).
struct ActivationFit
{
    std::array<double, 4> coefficients{};
    int64_t at(int64_t microbatch, int64_t context) const;
    // The terms the coefficients multiply: 1, T, B·T, B·T².
    static std::array<double, 4> terms(int64_t microbatch, int64_t context);
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

// What probing a TorchScript module found, for one precision mode and checkpointing setting. The
// engine probes (core/engine/run/memoryprobe.h); this floor keeps the result and predicts from it,
// so that a process without LibTorch (the workbench's designer) predicts from the cached probes.
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
    // Whether the passes' temporaries grew from microbatch 1 to 2 at the largest context probed.
    // Where they did not, a constant (autocast's cast weights, say) hid the part that grows with
    // the shape in every probe, and the fit's temporaries at a larger shape are only a floor.
    bool temporariesGrewWithMicrobatch() const;
    bool fromCache = false;
};

// The probes are kept between runs in $XDG_CACHE_HOME/optlog/torchscript-probes.json, by the
// module file's SHA-256, then by what changes the activations: the precision mode, checkpointing
// and device. A changed file has another SHA-256, so its probes are never taken for the new one's.
// The setting, as the cache names it: "autocast-bf16, checkpoint_every 0, cpu".
std::string probeSetting(const RunConfig &config);
// The probes of this module (by its file's SHA-256) in `config`'s setting, or none: not probed yet
// in that setting, or a damaged entry.
std::optional<ProbedMemory> readCachedProbes(const RunConfig &config, const std::string &sha256);
void writeCachedProbes(const RunConfig &config, const ProbedMemory &probed);

// The run's memory by role: the model state exactly from the parameter sizes (modelStateEstimate),
// saved activations and temporaries from the fit at the config's microbatch and context.
MemoryEstimate probedEstimate(const RunConfig &config, const ProbedMemory &probed, int64_t rank = 0);

} // namespace optlog
