// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace optlog {

// Does a technique cost quality? The difference of mean validation losses at matched tokens,
// judged against the tolerance with the noise between seeds: Welch's 95% interval where both
// sides have two seeds or more, the tolerance alone where a side has one.
struct QualityVerdict
{
    enum class Kind { Same, Worse, Better, CantTell, NotComparable };
    Kind kind = Kind::NotComparable;
    double difference = 0; // mean minus the baseline's mean, nats per token
    double halfWidth = 0;  // of Welch's 95% interval; NaN with one seed on a side
    int64_t seeds = 0;
    int64_t baselineSeeds = 0;
    double tolerance = 0; // nats per token counted as no difference
    // CantTell: the half-width that would decide, and about how many seeds per side reach it
    // (kSeedLimit: no feasible number).
    double decidingHalfWidth = 0;
    int64_t seedsPerSide = 0;
    static constexpr int64_t kSeedLimit = 1000;

    bool seedNoiseKnown() const { return seeds >= 2 && baselineSeeds >= 2; }
    // "same quality (Δ +0.003 ± 0.008 nats, 3 vs 3 seeds)", "can't tell yet: ...".
    std::string text() const;
};

// The judgement's word, wherever it is shown: "same", "worse", "better", "can't tell", "not comparable".
const char *qualityWord(QualityVerdict::Kind kind);

// Same: the whole interval within ±tolerance. Worse (better): the interval above (below) zero
// and the difference beyond the tolerance. Otherwise can't tell yet. With one seed on a side:
// same, worse or better by the tolerance alone. Empty sides: not comparable.
QualityVerdict judgeQuality(const std::vector<double> &losses, const std::vector<double> &baselineLosses,
                            double tolerance);

} // namespace optlog
