// SPDX-License-Identifier: MIT
#include "core/analysis.h"

#include "core/config.h"
#include "core/modelshape.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

namespace optlog {

namespace {

double quantile(std::vector<double> sorted, double q)
{
    if (sorted.empty())
        return 0;
    const double position = q * double(sorted.size() - 1);
    const size_t below = size_t(std::floor(position));
    const size_t above = std::min(below + 1, sorted.size() - 1);
    const double weight = position - double(below);
    return sorted[below] * (1 - weight) + sorted[above] * weight;
}

std::string percent(double fraction)
{
    char text[32];
    std::snprintf(text, sizeof(text), "%.0f%%", std::fabs(fraction) * 100);
    return text;
}

// Speed and memory differences this small are not worth a decision.
constexpr double kSameSpeed = 0.03;
constexpr double kSameMemory = 0.03;
// Half the p10-p90 spread of step throughput beyond which a machine was too busy to compare speeds.
constexpr double kTooNoisy = 0.25;

std::string verdictFor(const ComparisonRow &row, const RunSummary &baseline, double tolerance)
{
    if (row.outcome != "completed")
        return row.outcome + " - no verdict";
    std::vector<std::string> parts;
    if (std::isnan(row.deltaLoss))
        parts.push_back("quality not comparable (no common validation tokens)");
    else if (std::fabs(row.deltaLoss) <= tolerance)
        parts.push_back("same quality");
    else
        parts.push_back(row.deltaLoss > 0 ? "worse quality" : "better quality");

    const double noise = std::max({kSameSpeed, row.throughput.relativeSpread() / 2,
                                   baseline.throughput.relativeSpread() / 2});
    if (noise > kTooNoisy)
        parts.push_back("speed too noisy to call (step-time spread " + percent(2 * noise) + ")");
    else if (std::fabs(row.speedup - 1) <= noise)
        parts.push_back("same speed");
    else if (row.speedup > 1) {
        char text[32];
        std::snprintf(text, sizeof(text), "%.2fx faster", row.speedup);
        parts.push_back(text);
    } else
        parts.push_back(percent(1 - row.speedup) + " slower");

    if (row.peakBytes == 0 || baseline.peakBytes == 0)
        parts.push_back("memory not measured");
    else if (std::fabs(row.memorySaved) <= kSameMemory)
        parts.push_back("same memory");
    else
        parts.push_back(row.memorySaved > 0 ? "saves " + percent(row.memorySaved) + " memory"
                                            : "uses " + percent(row.memorySaved) + " more memory");
    std::string out;
    for (const auto &p : parts)
        out += (out.empty() ? "" : ", ") + p;
    return out;
}

} // namespace

ThroughputSummary steadyThroughput(const std::vector<StepMetrics> &metrics, int64_t warmupSteps)
{
    std::vector<double> rates;
    for (const auto &m : metrics)
        if (m.step >= warmupSteps && m.tokensPerSecond > 0)
            rates.push_back(m.tokensPerSecond);
    std::sort(rates.begin(), rates.end());
    ThroughputSummary s;
    s.steps = int64_t(rates.size());
    s.median = quantile(rates, 0.5);
    s.p10 = quantile(rates, 0.1);
    s.p90 = quantile(rates, 0.9);
    return s;
}

double validationAt(const std::vector<ValidationPoint> &points, int64_t tokens)
{
    for (size_t i = 0; i < points.size(); ++i) {
        if (points[i].tokens == tokens)
            return points[i].loss;
        if (i > 0 && points[i - 1].tokens < tokens && tokens < points[i].tokens) {
            const double w = double(tokens - points[i - 1].tokens) / double(points[i].tokens - points[i - 1].tokens);
            return points[i - 1].loss * (1 - w) + points[i].loss * w;
        }
    }
    return std::numeric_limits<double>::quiet_NaN();
}

RunSummary summarize(const Store &store, const RunRecord &run)
{
    RunSummary s;
    s.run = run;
    RunConfig config;
    try {
        applyTomlText(config, run.configToml, "run " + std::to_string(run.id));
        s.parameters = parameterCount(config.model);
        s.warmupSteps = config.memory.warmupSteps;
    } catch (const ConfigError &) {
        // A config written by another optlog version: the numbers below still stand.
    }
    s.throughput = steadyThroughput(store.metrics(run.id), s.warmupSteps);
    s.validation = store.validation(run.id);
    for (const auto &row : store.memory(run.id)) {
        if (row.source != "measured")
            continue;
        if (row.role == "peak")
            s.peakBytes = row.bytes;
        if (row.role == "peak_rss")
            s.peakRssBytes = row.bytes;
    }
    return s;
}

std::vector<ComparisonRow> compare(const RunSummary &baseline, const std::vector<RunSummary> &runs, double tolerance)
{
    std::vector<ComparisonRow> rows;
    for (const auto &s : runs) {
        ComparisonRow row;
        row.name = s.run.name;
        row.outcome = s.run.outcome.empty() ? s.run.status : s.run.outcome;
        const int64_t lastRun = s.validation.empty() ? 0 : s.validation.back().tokens;
        const int64_t lastBase = baseline.validation.empty() ? 0 : baseline.validation.back().tokens;
        row.matchedTokens = std::min(lastRun, lastBase);
        row.validationLoss = validationAt(s.validation, row.matchedTokens);
        row.deltaLoss = row.validationLoss - validationAt(baseline.validation, row.matchedTokens);
        row.throughput = s.throughput;
        row.speedup = baseline.throughput.median > 0 ? s.throughput.median / baseline.throughput.median : 0;
        row.peakBytes = s.peakBytes;
        row.memorySaved = baseline.peakBytes > 0 ? 1 - double(s.peakBytes) / double(baseline.peakBytes) : 0;
        row.verdict = verdictFor(row, baseline, tolerance);
        rows.push_back(row);
    }
    return rows;
}

std::string formatBytes(int64_t bytes)
{
    char text[32];
    if (bytes >= (int64_t(1) << 30))
        std::snprintf(text, sizeof(text), "%.2f GiB", double(bytes) / double(int64_t(1) << 30));
    else
        std::snprintf(text, sizeof(text), "%.1f MiB", double(bytes) / double(1 << 20));
    return text;
}

std::string formatComparison(const std::vector<ComparisonRow> &rows, const std::string &baselineName,
                             double tolerance)
{
    std::ostringstream out;
    char line[512];
    std::snprintf(line, sizeof(line), "%-26s %-10s %10s %9s %8s %18s %8s %11s  %s\n", "run", "outcome", "tokens",
                  "val loss", "delta", "tokens/s [p10-p90]", "speed", "peak mem", "verdict");
    out << line;
    for (const auto &r : rows) {
        char rate[48];
        std::snprintf(rate, sizeof(rate), "%.0f [%.0f-%.0f]", r.throughput.median, r.throughput.p10,
                      r.throughput.p90);
        std::snprintf(line, sizeof(line), "%-26s %-10s %10lld %9.4f %+8.4f %18s %7.2fx %11s  %s\n", r.name.c_str(),
                      r.outcome.c_str(), static_cast<long long>(r.matchedTokens), r.validationLoss, r.deltaLoss,
                      rate, r.speedup, formatBytes(r.peakBytes).c_str(),
                      r.name == baselineName ? "baseline" : r.verdict.c_str());
        out << line;
    }
    std::snprintf(line, sizeof(line),
                  "Validation loss (nats/token) at the largest token count both runs reached; "
                  "same quality = within %.3f of %s.\n",
                  tolerance, baselineName.c_str());
    out << line;
    out << "Peak memory: counting allocator over complete steps after warm-up, optimizer step included.\n";
    return out.str();
}

} // namespace optlog
