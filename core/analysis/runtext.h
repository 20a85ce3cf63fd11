// SPDX-License-Identifier: MIT
// A run in words: how it ended, where its config came from, its tags, the dtypes it read.
#pragma once

#include "core/contract/precisionmodes.h"
#include "core/store/store.h"

#include <string>
#include <utility>
#include <vector>

namespace optlog {

// How a run ended, in words: "running", "completed", "oom at step 6". With `withMessage` the
// engine's reason follows a run that did not complete ("oom at step 6: out of memory budget ...").
std::string outcomeText(const RunRecord &run, bool withMessage = false);

// Where the run's config came from, in words: "derived from run 3 (baseline) of this study" (or of
// another study file); "" for a run designed afresh. `study`: the path of the run's own study.
std::string originText(const RunRecord &run, const std::string &study);
// The name of a run made from `source`: its name with the first free " v2", " v3", ... among
// `existing`.
std::string derivedRunName(const std::string &source, const std::vector<RunRecord> &existing);
// What a derived run changed from the run it was made from, when that run is in `store`:
// "changed: train.steps 8 -> 6", "unchanged"; "" when the source is elsewhere or unreadable.
std::string changesFromOrigin(const Store &store, const RunRecord &run);
// "long, server" or "" : a run's tags as one line.
std::string tagsText(const RunRecord &run);
// What a recorded run lacks that only the engine knows, in words, said in place of the figures.
std::string recordedRunLimits();

// Each state's dtype as the run read it from its tensors, in the precision table's order ("none":
// the mode has no such state); empty when the run stored none (it ended before measuring them).
std::vector<std::pair<PrecisionState, std::string>> storedDtypes(const RunRecord &run);

} // namespace optlog
