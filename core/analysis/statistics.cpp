// SPDX-License-Identifier: MIT
#include "core/analysis/statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace optlog {

namespace {

// The continued fraction of the regularized incomplete beta function, by the modified Lentz
// method; converges fast for x < (a + 1) / (a + b + 2).
double betaContinuedFraction(double a, double b, double x)
{
    constexpr double tiny = 1e-300;
    double c = 1, d = 1 - (a + b) * x / (a + 1);
    d = 1 / (std::fabs(d) < tiny ? tiny : d);
    double h = d;
    for (int m = 1; m <= 300; ++m) {
        const double m2 = 2.0 * m;
        for (const double coefficient :
             {m * (b - m) * x / ((a + m2 - 1) * (a + m2)), -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1))}) {
            d = 1 + coefficient * d;
            d = 1 / (std::fabs(d) < tiny ? tiny : d);
            c = 1 + coefficient / c;
            c = std::fabs(c) < tiny ? tiny : c;
            h *= d * c;
        }
        if (std::fabs(d * c - 1) < 1e-15)
            break;
    }
    return h;
}

// I_x(a, b), the regularized incomplete beta function.
double incompleteBeta(double a, double b, double x)
{
    if (x <= 0)
        return 0;
    if (x >= 1)
        return 1;
    const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x)
                                  + b * std::log1p(-x));
    if (x < (a + 1) / (a + b + 2))
        return front * betaContinuedFraction(a, b, x) / a;
    return 1 - front * betaContinuedFraction(b, a, 1 - x) / b;
}

// P(T <= t) for Student's t with `dof` degrees of freedom.
double studentTCdf(double t, double dof)
{
    const double tail = 0.5 * incompleteBeta(dof / 2, 0.5, dof / (dof + t * t));
    return t >= 0 ? 1 - tail : tail;
}

} // namespace

SampleStats sampleStats(const std::vector<double> &values)
{
    SampleStats s;
    s.n = int64_t(values.size());
    if (values.empty())
        return s;
    for (double v : values)
        s.mean += v;
    s.mean /= double(s.n);
    if (s.n > 1) {
        double squares = 0;
        for (double v : values)
            squares += (v - s.mean) * (v - s.mean);
        s.sd = std::sqrt(squares / double(s.n - 1));
    }
    return s;
}

double studentTQuantile(double p, double dof)
{
    if (!(p > 0 && p < 1) || !(dof > 0))
        return std::numeric_limits<double>::quiet_NaN();
    if (p < 0.5)
        return -studentTQuantile(1 - p, dof);
    // The CDF is increasing: bisect on t between 0 and a bound it is certainly below.
    double low = 0, high = 1;
    while (studentTCdf(high, dof) < p && high < 1e12)
        high *= 2;
    for (int i = 0; i < 200 && high - low > 1e-12 * std::max(1.0, high); ++i) {
        const double middle = 0.5 * (low + high);
        (studentTCdf(middle, dof) < p ? low : high) = middle;
    }
    return 0.5 * (low + high);
}

MeanDifference welchInterval(const SampleStats &a, const SampleStats &b, double confidence)
{
    MeanDifference out;
    out.difference = a.mean - b.mean;
    if (a.n < 2 || b.n < 2) {
        out.halfWidth = std::numeric_limits<double>::quiet_NaN();
        return out;
    }
    const double va = a.sd * a.sd / double(a.n), vb = b.sd * b.sd / double(b.n);
    const double standardError = std::sqrt(va + vb);
    if (standardError == 0) {
        out.dof = double(a.n + b.n - 2);
        return out; // identical replicates: no spread to widen the interval
    }
    // The Welch–Satterthwaite degrees of freedom.
    out.dof = (va + vb) * (va + vb) / (va * va / double(a.n - 1) + vb * vb / double(b.n - 1));
    out.halfWidth = studentTQuantile(0.5 + confidence / 2, out.dof) * standardError;
    return out;
}

PooledMean pooledWithinRuns(const std::vector<std::vector<double>> &runs)
{
    PooledMean out;
    double squares = 0, blocks = 0, means = 0, counted = 0;
    for (const std::vector<double> &run : runs) {
        if (run.empty())
            continue;
        const SampleStats stats = sampleStats(run);
        means += stats.mean;
        ++counted;
        squares += stats.sd * stats.sd * double(stats.n - 1);
        out.dof += double(stats.n - 1);
        blocks += double(stats.n);
    }
    out.mean = counted > 0 ? means / counted : 0;
    // The mean of `counted` run means, each of blocks / counted blocks.
    out.variance = out.dof > 0 ? squares / out.dof / blocks : std::numeric_limits<double>::quiet_NaN();
    return out;
}

MeanDifference pooledInterval(const PooledMean &a, const PooledMean &b, double confidence)
{
    MeanDifference out;
    out.difference = a.mean - b.mean;
    const double variance = a.variance + b.variance;
    if (std::isnan(variance) || a.dof <= 0 || b.dof <= 0) {
        out.halfWidth = std::numeric_limits<double>::quiet_NaN();
        return out;
    }
    if (variance == 0) {
        out.dof = a.dof + b.dof;
        return out; // identical blocks: no spread to widen the interval
    }
    out.dof = variance * variance / (a.variance * a.variance / a.dof + b.variance * b.variance / b.dof);
    out.halfWidth = studentTQuantile(0.5 + confidence / 2, out.dof) * std::sqrt(variance);
    return out;
}

int64_t seedsForHalfWidth(const SampleStats &a, const SampleStats &b, double halfWidth, double confidence, int64_t limit)
{
    const double pooledSd = std::sqrt((a.sd * a.sd + b.sd * b.sd) / 2);
    for (int64_t n = std::max<int64_t>({2, a.n, b.n}); n < limit; ++n) {
        const double width = studentTQuantile(0.5 + confidence / 2, double(2 * n - 2)) * pooledSd
                             * std::sqrt(2.0 / double(n));
        if (width <= halfWidth)
            return n;
    }
    return limit;
}

} // namespace optlog
