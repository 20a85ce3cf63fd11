// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <vector>

namespace optlog {

// The mean and sample standard deviation (n - 1) of a few values: one per seed.
struct SampleStats
{
    int64_t n = 0;
    double mean = 0;
    double sd = 0; // 0 for fewer than two values
};
SampleStats sampleStats(const std::vector<double> &values);

// The p-quantile of Student's t distribution with `dof` degrees of freedom (any real dof > 0),
// from its CDF through the regularized incomplete beta function, to about 1e-9.
double studentTQuantile(double p, double dof);

// A difference of two means with its two-sided confidence interval: difference ± halfWidth.
struct MeanDifference
{
    double difference = 0;
    double halfWidth = 0;
    double dof = 0;
};

// Welch's t interval for mean(a) - mean(b), which does not assume equal variances; both need
// at least two values. `confidence` is two-sided (0.95: 95%).
MeanDifference welchInterval(const SampleStats &a, const SampleStats &b, double confidence = 0.95);

// A side's mean over the blocks of all its runs (seeds), each block about its own run's mean:
// what the steps say of the runs' speed, pooled (two runs of five blocks: 8 degrees of freedom).
// What the runs say of each other is not in it: the comparison adds that level (comparison.cpp).
struct PooledMean
{
    double mean = 0;     // of the runs' block means
    double variance = 0; // of `mean`; NaN where no run has two blocks
    double dof = 0;
};
// `runs`: each run's blocks (logs of tokens/s, say).
PooledMean pooledWithinRuns(const std::vector<std::vector<double>> &runs);
// The interval of mean(a) - mean(b), Welch–Satterthwaite over the two sides' variances.
MeanDifference pooledInterval(const PooledMean &a, const PooledMean &b, double confidence = 0.95);

// Seeds per side (at least `n` now on the larger side) that would bring Welch's half-width to
// `halfWidth`, if both sides kept their standard deviations: pooled sd, equal sample sizes.
// Returns `limit` when even that many would not.
int64_t seedsForHalfWidth(const SampleStats &a, const SampleStats &b, double halfWidth, double confidence = 0.95,
                          int64_t limit = 1000);

} // namespace optlog
