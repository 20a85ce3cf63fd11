// SPDX-License-Identifier: MIT
#include "core/engine/run/storedweights.h"

#include "core/contract/format.h"
#include "core/engine/model/weightfiles.h"
#include "core/store/weights.h"

namespace optlog {

QuantizableRun quantizableRun(const Store &store, const RunRecord &run)
{
    const std::string label = "run " + std::to_string(run.id) + " (" + printable(run.name) + ")";
    if (!run.isFinished() || *run.outcome != Outcome::Completed)
        throw StoreError(label + " has not completed (" + outcomeName(run.outcome)
                         + "), so it has no final weights to quantize"
                         + (run.isFinished() ? "; `optlog run --resume` continues a cancelled or crashed run" : ""));
    std::optional<WeightFile> final;
    for (const WeightFile &file : weightFiles(store, run.id))
        if (file.kind == WeightFileKind::Final)
            final = file;
    if (!final)
        throw StoreError(label
                         + " has no final weights on disk (it ran before optlog kept weights, or was "
                           "copied from another study); run it again to quantize it");
    const std::string path = store.absolutePath(final->path);
    verifyWeightFile(path, *final);
    return {path, loadDerivedConfig(run.configToml, label, {})};
}

} // namespace optlog
