// SPDX-License-Identifier: MIT
#pragma once

#include "core/analysis/runfilter.h"
#include "core/store/store.h"

#include <ostream>
#include <string>

namespace optlog {

// `optlog runs`: one line per run the filter keeps (outcome, steps, tokens, last validation loss,
// steady tokens/s, peak memory, tags); a line that says so when it keeps none.
std::string formatRunList(const Store &store, const RunFilter &filter = {});

// Rows under a header, each column as wide as its widest cell, each line led by `indent`.
std::string alignedTable(const std::vector<std::string> &header, const std::vector<std::vector<std::string>> &rows,
                         const std::string &indent = "");
// `optlog show`: one run in full: outcome, throughput, validation, dtypes, memory by role
// predicted beside measured, weights on disk, quantizations, events, environment, config.
std::string formatRunDetail(const Store &store, const RunRecord &run);

// `optlog export --format csv`: one row per run and optimizer step; val_loss on the steps that
// were validated.
void writeMetricsCsv(const Store &store, std::ostream &out);

// `optlog export --format json`: every run with its metrics, validation, memory and events.
std::string studyJson(const Store &store);

} // namespace optlog
