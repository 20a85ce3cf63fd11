// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace optlog {

// How data-parallel ranks cut the model's parameters for collectives and for ZeRO. The parameters,
// in the model's order, are grouped into buckets of at most `bucketElements` (a larger parameter
// gets a bucket of its own); each bucket is padded to a multiple of the ranks and cut into equal
// parts, part r owned by rank r. A rank's shard is its part of every bucket. The engine reduces,
// steps and gathers by this layout and the memory model predicts from it, so the two count the
// same elements.
struct ShardLayout
{
    struct Bucket
    {
        int64_t firstParameter = 0, endParameter = 0; // [first, end) in the model's order
        int64_t elements = 0;                         // the parameters' elements
        int64_t paddedElements = 0;                   // a multiple of the ranks
    };
    // One parameter's elements that lie in one rank's part of its bucket.
    struct Piece
    {
        int64_t parameter = 0;
        int64_t offset = 0; // into the parameter, flattened
        int64_t length = 0;
        int64_t bucket = 0;
        int64_t bucketOffset = 0; // into the bucket
    };

    int64_t ranks = 1;
    std::vector<Bucket> buckets;
    std::vector<int64_t> bucketOffsets; // per parameter: where it starts in its bucket

    int64_t partElements(int64_t bucket) const { return buckets[size_t(bucket)].paddedElements / ranks; }
    std::vector<Piece> piecesOf(int64_t rank) const;
    int64_t shardElements(int64_t rank) const; // the parameters' elements rank owns: the sum of its pieces
    int64_t largestBucket() const;             // padded elements
    int64_t largestPart() const;
};

ShardLayout shardLayout(const std::vector<int64_t> &parameterElements, int64_t ranks, int64_t bucketElements);

} // namespace optlog
