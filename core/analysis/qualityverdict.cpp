// SPDX-License-Identifier: MIT
#include "core/analysis/qualityverdict.h"

#include "core/analysis/statistics.h"
#include "core/contract/format.h"
#include "core/contract/rowlookup.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace optlog {

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

} // namespace

const char *qualityWord(QualityVerdict::Kind kind)
{
    static constexpr Named<QualityVerdict::Kind> words[] = {{QualityVerdict::Kind::Same, "same"},
                                                            {QualityVerdict::Kind::Worse, "worse"},
                                                            {QualityVerdict::Kind::Better, "better"},
                                                            {QualityVerdict::Kind::CantTell, "can't tell"},
                                                            {QualityVerdict::Kind::NotComparable, "not comparable"}};
    return nameIn(words, kind);
}

std::string QualityVerdict::text() const
{
    if (kind == Kind::NotComparable)
        return std::string("quality ") + qualityWord(kind) + " (no common validation tokens)";
    const std::string delta = formatted("Δ %+.3f", difference);
    const std::string seedCount = formatted("%lld vs %lld seeds", static_cast<long long>(seeds),
                                            static_cast<long long>(baselineSeeds));
    // With one seed on a side there is no interval, so never "can't tell": judged by the tolerance.
    if (!seedNoiseKnown())
        return formatted("%s quality by the %.3f tolerance (%s nats; %s: seed noise unknown)", qualityWord(kind),
                         tolerance, delta.c_str(), seedCount.c_str());
    const std::string interval = formatted("%s ± %.3f nats, %s", delta.c_str(), halfWidth, seedCount.c_str());
    if (kind != Kind::CantTell)
        return qualityWord(kind) + std::string(" quality (") + interval + ")";
    if (seedsPerSide >= kSeedLimit)
        return formatted("%s yet: %s; it sits at the %.3f tolerance, where no feasible number of seeds decides",
                         qualityWord(kind), interval.c_str(), tolerance);
    return formatted("%s yet: %s; add seeds (about %lld more each to resolve ±%.3f)", qualityWord(kind),
                     interval.c_str(), static_cast<long long>(seedsPerSide - std::max(seeds, baselineSeeds)),
                     decidingHalfWidth);
}

QualityVerdict judgeQuality(const std::vector<double> &losses, const std::vector<double> &baselineLosses,
                            double tolerance)
{
    QualityVerdict v;
    v.tolerance = tolerance;
    const SampleStats a = sampleStats(losses), b = sampleStats(baselineLosses);
    v.seeds = a.n;
    v.baselineSeeds = b.n;
    if (a.n == 0 || b.n == 0 || std::isnan(a.mean) || std::isnan(b.mean)) {
        v.difference = kNaN;
        v.halfWidth = kNaN;
        return v;
    }
    const MeanDifference d = welchInterval(a, b);
    v.difference = d.difference;
    v.halfWidth = d.halfWidth;
    const double size = std::fabs(d.difference);
    if (!v.seedNoiseKnown()) {
        v.kind = size <= tolerance  ? QualityVerdict::Kind::Same
                 : d.difference > 0 ? QualityVerdict::Kind::Worse
                                    : QualityVerdict::Kind::Better;
        return v;
    }
    if (size + d.halfWidth <= tolerance)
        v.kind = QualityVerdict::Kind::Same;
    else if (size > tolerance && size - d.halfWidth > 0)
        v.kind = d.difference > 0 ? QualityVerdict::Kind::Worse : QualityVerdict::Kind::Better;
    else {
        v.kind = QualityVerdict::Kind::CantTell;
        // Within the tolerance, a narrower interval would show "same"; beyond it, one that
        // excludes zero would show the difference.
        v.decidingHalfWidth = size < tolerance ? tolerance - size : size;
        v.seedsPerSide = v.decidingHalfWidth > 0
                             ? seedsForHalfWidth(a, b, v.decidingHalfWidth, 0.95, QualityVerdict::kSeedLimit)
                             : QualityVerdict::kSeedLimit;
    }
    return v;
}

} // namespace optlog
