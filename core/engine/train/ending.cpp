// SPDX-License-Identifier: MIT
#include "core/engine/train/ending.h"

#include "core/engine/distributed/rankgroup.h"
#include "core/engine/memory/countingallocator.h"

#include <c10/util/Exception.h>

#include <new>

namespace optlog {

TrainingOutcome outcomeOfException(const std::exception &e, const EndingContext &context)
{
    const bool beforeFirstStep = context.failedStep < 0;
    const std::string where = beforeFirstStep ? std::string("before the first step")
                                              : "at step " + std::to_string(context.failedStep);
    const auto &allocator = CountingAllocator::instance();
    TrainingOutcome outcome;
    outcome.outcome = Outcome::Failed;
    if (const auto *deviceOom = dynamic_cast<const c10::OutOfMemoryError *>(&e)) {
        // A GPU's own limit (the CPU's rehearsed budget is below).
        outcome.outcome = Outcome::Oom;
        outcome.step = context.failedStep;
        outcome.message = "out of " + context.device + " memory " + where + ": " + deviceOom->what_without_backtrace();
    } else if (dynamic_cast<const RankLost *>(&e)) {
        // Another rank died or stopped answering: the run cannot go on without it.
        const std::string lost = context.lostRank ? context.lostRank() : std::string();
        outcome.outcome = Outcome::Crashed;
        // Crashed names the last step completed (failedStep is the one after it; -1: none was).
        outcome.step = context.failedStep > 0 ? context.failedStep - 1 : -1;
        outcome.message = (lost.empty() ? std::string() : lost + "; ") + e.what();
    } else if (const auto refusal = allocator.refusal()) {
        // Building the model or its optimizer can already exceed a budget.
        outcome.outcome = Outcome::Oom;
        outcome.step = context.failedStep;
        outcome.refusal = refusal;
        outcome.message = MemoryBudgetExceeded(*refusal).what() + std::string(", ") + where;
    } else if (dynamic_cast<const std::bad_alloc *>(&e) || allocator.machineRefused()) {
        outcome.message = context.machineRanOut ? context.machineRanOut() : std::string("out of memory: ") + e.what();
    } else {
        outcome.message = e.what();
    }
    return outcome;
}

} // namespace optlog
