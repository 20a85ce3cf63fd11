// SPDX-License-Identifier: MIT
// The tables about runs that the terminal, the reports and the workbench share: quantizations,
// ranks and memory by role.
#pragma once

#include "core/analysis/runsummary.h"

#include <string>
#include <vector>

namespace optlog {

// Post-training quantization, where users look: one row per quantization of a run's final weights,
// led by the run's own floating-point weights, and what memory quantizing weights does not touch.
std::vector<std::string> quantizationHeader();
std::vector<std::vector<std::string>> quantizationRows(const std::vector<QuantizationResult> &results);
std::string quantizationUntouched();

// Data parallel, where users look: one row per rank of a run (host, outcome, its share of the step
// time spent in collectives), then per memory role its bytes "measured / predicted". A run on one
// process is one row, its rank 0.
std::vector<std::string> rankHeader();
std::vector<std::vector<std::string>> rankRows(const RunSummary &summary);
// `optlog study` and `compare`: every run's ranks with its ZeRO stage and global throughput, when
// a run among them trained over ranks; else empty.
std::string formatDataParallel(const std::vector<RunSummary> &runs);
// "2 ranks x microbatch 4 x accumulation 1 = 8 sequences per step": a run's effective batch.
std::string effectiveBatch(const RunConfig &config);
// "int4 g64", "int8 per channel", "mixed g64 (int8: blocks.0.mlp.fc.weight, ...)".
std::string quantizationLabel(const QuantizationResult &result);

// One memory role of a run, predicted beside measured; -1 where a side has no figure.
struct RoleMemory
{
    MemoryRole role;
    std::string dtype; // the measured state's, else the prediction's
    int64_t predicted = -1;
    int64_t measured = -1;
};
// Every role the rows hold, in the roles' order (core/contract/memoryroles.h).
std::vector<RoleMemory> memoryByRole(const std::vector<MemoryRow> &rows);
// "+1.5%": measured against predicted; "" unless both are there.
std::string residualText(const RoleMemory &line);

// Each run's measured peak by role with the dtype of each state, one line per run.
std::string formatMemoryByRole(const std::vector<RunSummary> &runs);

} // namespace optlog
