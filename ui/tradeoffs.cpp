// SPDX-License-Identifier: MIT
#include "ui/tradeoffs.h"

#include <QHash>
#include <QObject>

namespace optlog {

QString techniqueTradeoff(const QString &fieldPath)
{
    static const QHash<QString, QString> tradeoffs = {
        {QStringLiteral("precision.mode"),
         QObject::tr("fp32: the baseline, 16 bytes of model state per parameter.\n"
                     "autocast-bf16: matmuls in BF16, weights and Adam state stay FP32: smaller saved "
                     "activations at the same model-state memory; faster only where BF16 matmuls are.\n"
                     "master-bf16: BF16 weights and gradients with FP32 master copies (still ~16 bytes per "
                     "parameter), BF16 activations.\n"
                     "pure-bf16: everything BF16, ~8 bytes per parameter, but updates smaller than BF16's "
                     "resolution are lost: watch the validation loss.\n"
                     "autocast-fp16 / master-fp16: CUDA only, with a loss scaler.")},
        {QStringLiteral("train.microbatch"),
         QObject::tr("Sequences per forward/backward. Halving it halves the saved activations but runs "
                     "smaller, less efficient matmuls; keep the effective batch with train.accumulation.")},
        {QStringLiteral("train.accumulation"),
         QObject::tr("Microbatches per optimizer step: the same effective batch with a smaller microbatch's "
                     "activation memory, paid for in more, smaller passes.")},
        {QStringLiteral("memory.checkpoint_every"),
         QObject::tr("Activation checkpointing: keep only each checkpointed block's input and recompute the "
                     "block in backward. Saves most of its saved activations for about one extra forward "
                     "(roughly a third more step time). 0 off, 1 every block, k every k-th.")},
        {QStringLiteral("memory.attention"),
         QObject::tr("naive keeps the B·H·T·T attention scores and softmax for backward (quadratic in T); "
                     "chunked processes queries in chunks and recomputes each in backward: linear in T, "
                     "for some extra compute.")},
        {QStringLiteral("memory.attention_chunk"),
         QObject::tr("Queries per chunk with chunked attention: smaller chunks keep less at once but run "
                     "more, smaller matmuls.")},
        {QStringLiteral("memory.budget"),
         QObject::tr("Rehearse a smaller device on this CPU: an allocation past the budget is refused as an "
                     "out-of-memory, with the phase it happened in, and nothing else changes.")},
        {QStringLiteral("model.dropout"),
         QObject::tr("Regularisation; with checkpointing the recomputation replays the same dropout masks.")},
    };
    return tradeoffs.value(fieldPath);
}

} // namespace optlog
