// SPDX-License-Identifier: MIT
#pragma once

#include "core/store.h"

#include <cstdint>
#include <string>
#include <vector>

namespace optlog {

// Steady-state throughput: the median over the steps after warm-up, with the 10th and 90th
// percentiles as its spread (a shared machine's noise shows up there, not in the median).
struct ThroughputSummary
{
    double median = 0; // tokens/s
    double p10 = 0;
    double p90 = 0;
    int64_t steps = 0; // steps counted
    double relativeSpread() const { return median > 0 ? (p90 - p10) / median : 0; }
};
ThroughputSummary steadyThroughput(const std::vector<StepMetrics> &metrics, int64_t warmupSteps);

// Validation loss at `tokens`, linearly interpolated between the run's validation points;
// NaN outside the measured range.
double validationAt(const std::vector<ValidationPoint> &points, int64_t tokens);

// Everything a comparison needs about one run, read from the study.
struct RunSummary
{
    RunRecord run;
    int64_t parameters = 0;
    int64_t warmupSteps = 1;
    ThroughputSummary throughput;
    std::vector<ValidationPoint> validation;
    int64_t peakBytes = 0;    // counting allocator, complete steps after warm-up
    int64_t peakRssBytes = 0; // process high-water mark
};
RunSummary summarize(const Store &store, const RunRecord &run);

struct ComparisonRow
{
    std::string name;
    std::string outcome;
    int64_t matchedTokens = 0; // where both runs have validation loss
    double validationLoss = 0;  // at matchedTokens
    double deltaLoss = 0;       // minus the baseline's, at matchedTokens
    ThroughputSummary throughput;
    double speedup = 0;         // steady tokens/s over the baseline's
    int64_t peakBytes = 0;
    double memorySaved = 0;     // 1 - peak / baseline peak
    std::string verdict;        // words a person can act on
};

// `tolerance` (nats per token) is the validation-loss difference counted as noise.
std::vector<ComparisonRow> compare(const RunSummary &baseline, const std::vector<RunSummary> &runs,
                                   double tolerance);
std::string formatComparison(const std::vector<ComparisonRow> &rows, const std::string &baselineName,
                             double tolerance);

std::string formatBytes(int64_t bytes);

} // namespace optlog
