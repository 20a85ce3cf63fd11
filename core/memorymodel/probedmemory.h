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

// Bytes of one role over a step as c0 + c1·T + c2·T² + c3·B·T + c4·B·T², for microbatch B and
// context T: linear in the microbatch; linear and quadratic in the context, the quadratic part
// either per sequence (naive attention's T x T scores) or once for the batch (a T x T decay or mask
// made from the positions alone, which no microbatch multiplies).
struct ActivationFit
{
    std::array<double, 5> coefficients{};
    int64_t at(int64_t microbatch, int64_t context) const;
    // The terms the coefficients multiply: 1, T, T², B·T, B·T².
    static std::array<double, 5> terms(int64_t microbatch, int64_t context);
    // The term only a T x T tensor shared by the batch needs; a fit without it leaves it 0.
    static constexpr size_t kSharedSquare = 2;
};

// One short training run of the module at a small size, and what it measured. Its temporaries are
// the larger of the passes' (backward's transients, which grow with the batch) and the optimizer
// step's (FP32 master gradients, say, fixed by the parameters).
struct MemoryProbe
{
    int64_t microbatch = 0, context = 0;
    int64_t savedActivations = 0, temporaries = 0, peak = 0;
    int64_t passTemporaries = 0; // over the forward and backward passes, the highest step
    // That step's optimizer step, above the model state, where it rose above the passes; else 0.
    // Only that step's: a later step's passes, over other batches, are not the optimizer's.
    int64_t stepTemporaries = 0;
};

// Which batches a prediction stands for, where the module's memory depends on its data (a mixture
// of experts' routing): their mean, or the worst seen, which a budget needs.
enum class Batches { Expected, Worst };

// What probing a TorchScript module found, for one precision mode and checkpointing setting. The
// engine probes (core/engine/run/memoryprobe.h); this floor keeps the result and predicts from it,
// so that a process without LibTorch (the workbench's designer) predicts from the cached probes.
struct ProbedMemory
{
    std::string sha256;                  // of the module file
    std::vector<int64_t> parameterSizes; // elements of each parameter, in the module's order
    int64_t blocks = 0;                  // of the contract's optional part
    std::vector<MemoryProbe> probes;     // what the fit sees
    // The largest fitted shape again, over other batches (other train.seed): where the module's
    // memory depends on its data they differ, and the prediction covers the worst of them.
    std::vector<MemoryProbe> replicates;
    // A larger shape the fit does not see: it chooses the fit's terms and says how close they hold.
    MemoryProbe heldOut;
    ActivationFit savedActivations, passTemporaries;
    // The optimizer step's bytes above the model state, where its peak was above the passes': the
    // step runs after the saved activations are freed.
    int64_t stepTemporaries = 0;
    // Saved activations at this size: the fit, scaled by how the batches probed at one shape differ.
    int64_t savedAt(int64_t microbatch, int64_t context, Batches batches = Batches::Worst) const;
    // Temporaries at this size (the peak less model state and saved activations): the passes' fit,
    // or the optimizer step's where it reaches higher.
    int64_t temporariesAt(int64_t microbatch, int64_t context, Batches batches = Batches::Worst) const;
    // How much the activations and temporaries differed over the batches probed at one shape: half
    // their range over their mean; 0 where the memory does not depend on the data.
    double dataSpread() const;
    // The fitted peak's relative error at the held-out shape.
    double heldOutError() const;
    // Whether the passes' temporaries grew from microbatch 1 to 2 at the largest context probed.
    // Where they did not, a constant (autocast's cast weights, say) hid the part that grows with
    // the shape in every probe, and the fit's temporaries at a larger shape are only a floor.
    bool temporariesGrewWithMicrobatch() const;
    int64_t largestContext() const;
    bool fromCache = false;

private:
    // The probes at the replicates' shape: the fitted one first.
    std::vector<MemoryProbe> sameShape() const;
    // A role at the replicates' shape over its batches (mean or worst), over the fitted probe's.
    double batchRatio(int64_t MemoryProbe::*role, Batches batches) const;
    // A role's fitted bytes scaled by that ratio.
    int64_t scaled(int64_t fitted, int64_t MemoryProbe::*role, Batches batches) const;
};

// The probes are kept between runs in $XDG_CACHE_HOME/optlog/torchscript-probes.json, by the
// module file's SHA-256, then by what changes the activations: the precision mode, checkpointing
// and device. A changed file has another SHA-256, so its probes are never taken for the new one's.
// The setting, as the cache names it: "autocast-bf16, checkpoint_every 0, cpu".
std::string probeSetting(const RunConfig &config);
// The probes of this module (by its file's SHA-256) in `config`'s setting, or none: not probed yet
// in that setting up to the config's context, or a damaged entry.
std::optional<ProbedMemory> readCachedProbes(const RunConfig &config, const std::string &sha256);
void writeCachedProbes(const RunConfig &config, const ProbedMemory &probed);

// The run's memory by role: the model state exactly from the parameter sizes (modelStateEstimate),
// saved activations and temporaries from the fit at the config's microbatch and context, for the
// worst batch probed; where that differs from the mean, the source says by how much.
MemoryEstimate probedEstimate(const RunConfig &config, const ProbedMemory &probed, int64_t rank = 0);

} // namespace optlog
