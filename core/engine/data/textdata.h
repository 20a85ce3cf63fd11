// SPDX-License-Identifier: MIT
#pragma once

#include "core/contract/inputerror.h"

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace optlog {

struct DataConfig;

// Data that cannot train the configured model: missing or empty corpus, token ids above the
// vocabulary, a context longer than the data. The message says what would be right.
class DataError : public InputError
{
public:
    using InputError::InputError;
};

struct TokenSplit
{
    std::vector<uint16_t> train;
    std::vector<uint16_t> validation;
    std::string description; // where the tokens came from, for the run's events
};

// Bytes of UTF-8 text as tokens (vocabulary 256), or nanoGPT's uint16 train.bin/val.bin.
// The text split is deterministic: the last validationFraction of the text validates.
TokenSplit loadTokens(const DataConfig &config, int64_t vocabSize, int64_t contextLength);

// Debian's fortunes (package `fortunes`) without their `%` separators; empty when not installed.
std::string fortunesText(const std::string &folder = "/usr/share/games/fortunes");
// A deterministic English-like text so that the default and every test run without fortunes.
std::string generatedText(size_t bytes = 1 << 20);

struct Batch
{
    at::Tensor inputs;  // (B, T) int64
    at::Tensor targets; // (B, T) int64, inputs shifted by one token
};

// Random windows of T + 1 tokens, from a seeded generator: the same seed gives the same batches.
class BatchSampler
{
public:
    BatchSampler(const std::vector<uint16_t> &tokens, int64_t contextLength, uint64_t seed);
    Batch next(int64_t sequences);
    // Draws `sequences` windows as next() does, and keeps `count` of them from `first` on: one
    // data-parallel rank's slice of the step's batch.
    Batch next(int64_t sequences, int64_t first, int64_t count);
    // The generator's state as text, and back: a resumed run draws the batches it would have drawn.
    std::string state() const;
    void restore(const std::string &state);

private:
    const std::vector<uint16_t> &m_tokens;
    int64_t m_contextLength;
    std::mt19937_64 m_generator;
};

// The fixed validation set: `sequences` windows drawn from the study's seed, in batches of at
// most `batchSize`. Identical for every run of a study with the same context length.
std::vector<Batch> validationBatches(const std::vector<uint16_t> &tokens, int64_t contextLength, int64_t sequences,
                                     int64_t batchSize, uint64_t studySeed);

} // namespace optlog
