// SPDX-License-Identifier: MIT
#pragma once

#include "core/engine/train/trainer.h"

#include <cstdint>
#include <exception>
#include <functional>
#include <string>

namespace optlog {

// Where an exception ended a run, and what only the run knows for its message (asked for only
// when that is how it ended).
struct EndingContext
{
    int64_t failedStep = -1;                    // the step that did not complete; -1: before the first step
    std::string device;                         // "cpu", "cuda:0": whose memory ran out
    std::function<std::string()> machineRanOut; // the message when the machine refused an allocation
    std::function<std::string()> lostRank;      // data parallel: which rank was lost and how; may be empty
};

// How an exception ends a run: the one place that reads an exception as an outcome, from its type
// and what the counting allocator remembers (LibTorch may rethrow an allocator's exception as its
// own), never from its text.
// - a device's own out-of-memory, or a refusal of the rehearsed budget: oom, at the failed step;
// - another rank lost: crashed, at the failed step;
// - the machine refusing an allocation: failed, with `machineRanOut`'s account;
// - anything else: failed, with the exception's message.
TrainingOutcome outcomeOfException(const std::exception &e, const EndingContext &context);

} // namespace optlog
