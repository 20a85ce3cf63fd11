// SPDX-License-Identifier: MIT
#pragma once
// For this folder's JSON writers only: each record of a study as `optlog export` (studytext.cpp)
// and the JSON report (reportjson.cpp) both write it, with the key names of
// core/contract/recordkeys.h, so that the two formats cannot drift apart.

#include "core/contract/measurements.h"
#include "core/store/store.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace optlog {

// A run's own fields, its whole config among them; `derivedFrom` is its origin in words (originText).
nlohmann::json runRecordJson(const RunRecord &run, const std::string &derivedFrom);
nlohmann::json metricJson(const StepMetrics &metrics);
nlohmann::json validationJson(const ValidationPoint &point);
nlohmann::json memoryRowJson(const MemoryRow &row);
nlohmann::json timelinesJson(const std::vector<MemoryTimeline> &timelines); // an array, empty for none
// A rank with its environment and its memory rows.
nlohmann::json rankJson(const RankRecord &rank, const std::vector<MemoryRow> &memory);

} // namespace optlog
