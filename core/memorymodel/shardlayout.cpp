// SPDX-License-Identifier: MIT
#include "core/memorymodel/shardlayout.h"

#include <algorithm>
#include <stdexcept>

namespace optlog {

ShardLayout shardLayout(const std::vector<int64_t> &parameterElements, int64_t ranks, int64_t bucketElements)
{
    if (ranks < 1 || bucketElements < 1)
        throw std::invalid_argument("shardLayout: ranks and bucket size must be positive");
    ShardLayout layout;
    layout.ranks = ranks;
    const auto close = [&](ShardLayout::Bucket &bucket, int64_t end) {
        bucket.endParameter = end;
        bucket.paddedElements = (bucket.elements + ranks - 1) / ranks * ranks;
        layout.buckets.push_back(bucket);
    };
    ShardLayout::Bucket open;
    for (size_t i = 0; i < parameterElements.size(); ++i) {
        const int64_t n = parameterElements[i];
        if (open.elements > 0 && open.elements + n > bucketElements) {
            close(open, int64_t(i));
            open = {int64_t(i), int64_t(i), 0, 0};
        }
        layout.bucketOffsets.push_back(open.elements);
        open.elements += n;
    }
    if (open.elements > 0 || layout.buckets.empty())
        close(open, int64_t(parameterElements.size()));
    return layout;
}

std::vector<ShardLayout::Piece> ShardLayout::piecesOf(int64_t rank) const
{
    std::vector<Piece> pieces;
    for (size_t b = 0; b < buckets.size(); ++b) {
        const Bucket &bucket = buckets[b];
        const int64_t part = bucket.paddedElements / ranks;
        const int64_t begin = rank * part, end = begin + part;
        for (int64_t p = bucket.firstParameter; p < bucket.endParameter; ++p) {
            const int64_t start = bucketOffsets[size_t(p)];
            const int64_t stop = p + 1 < bucket.endParameter ? bucketOffsets[size_t(p + 1)] : bucket.elements;
            const int64_t from = std::max(start, begin), to = std::min(stop, end);
            if (from < to)
                pieces.push_back({p, from - start, to - from, int64_t(b), from});
        }
    }
    return pieces;
}

int64_t ShardLayout::shardElements(int64_t rank) const
{
    int64_t total = 0;
    for (const Piece &piece : piecesOf(rank))
        total += piece.length;
    return total;
}

int64_t ShardLayout::largestBucket() const
{
    int64_t largest = 0;
    for (const Bucket &bucket : buckets)
        largest = std::max(largest, bucket.paddedElements);
    return largest;
}

int64_t ShardLayout::largestPart() const
{
    return largestBucket() / ranks;
}

} // namespace optlog
