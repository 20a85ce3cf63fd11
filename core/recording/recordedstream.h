// SPDX-License-Identifier: MIT
#pragma once

#include "core/contract/outcome.h"
#include "core/store/store.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>

namespace optlog {

// `optlog record`: a run that a trainer outside the engine reports as JSON-lines events
// (docs/events.md), written into a study through the recorder the engine's own runs go through.
// The stream's first line creates the run; each later line adds to it; the end of the stream
// without a finished event marks it crashed at its last step.
struct RecordedStream
{
    int64_t runId = 0; // 0: the stream was refused before its run existed
    Outcome outcome = Outcome::Failed;
    std::string message;  // the outcome's message; for a refused stream, why
    bool refused = false; // a line was not an event, or out of order: bad input (exit 2)
    int64_t lines = 0;    // lines read
    // How to measure the matmul peak that the run's MFU lacks, where its trainer gave its FLOPs
    // per token and no peak is cached for its machine; empty otherwise.
    std::string peakAdvice;
};

// The matmul peak of the machine a recorded run's environment describes, as its `matmul_peak`
// (MatmulPeak's JSON), or {"not_measured": why and how to measure it}. Reading the engine's cache
// needs LibTorch's version for its key: `optlog record` passes the engine's lookup where it has one.
using MatmulPeakOf = std::function<nlohmann::json(const nlohmann::json &environment)>;

// Reads events from `fd` until its end (a pipe: the trainer's process) and writes the run into
// `store`. Never throws for what the stream holds: a refused line ends the run failed with its
// line number, keeping the rows before it. Rows are flushed at least once a second while the
// stream is quiet, so a monitor follows the run as it trains. At the end the run's environment gets
// its machine's matmul peak (`matmul_peak`: `matmulPeakOf`), for its MFU, when its trainer gave
// its FLOPs per token; where there is none, `peakAdvice` says how to measure one.
RecordedStream recordStream(Store &store, int fd, const MatmulPeakOf &matmulPeakOf);

} // namespace optlog
