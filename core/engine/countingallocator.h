// SPDX-License-Identifier: MIT
#pragma once

#include <c10/core/Allocator.h>

#include <atomic>
#include <cstdint>

namespace optlog {

// The CPU allocator every LibTorch CPU tensor goes through once installed: it counts the
// bytes in use and their high-water mark, exactly (requested bytes, not pages).
// Memory that LibTorch's own libraries keep outside it (oneDNN and OpenBLAS scratch buffers,
// the heap of the runtime) shows only in the process's peak RSS.
class CountingAllocator final : public c10::Allocator
{
public:
    static CountingAllocator &instance();
    // Replaces LibTorch's default CPU allocator for the rest of the process.
    static void install();

    c10::DataPtr allocate(size_t bytes) const override;
    c10::DeleterFnPtr raw_deleter() const override { return &release; }

    int64_t currentBytes() const { return m_current.load(std::memory_order_relaxed); }
    int64_t peakBytes() const { return m_peak.load(std::memory_order_relaxed); }
    // Starts a new high-water mark from what is in use now (after warm-up, say).
    void resetPeak() { m_peak.store(currentBytes(), std::memory_order_relaxed); }

private:
    CountingAllocator() = default;
    // The deleter gets only the data pointer, so the size lives in a header just before it;
    // the DataPtr's context is the data pointer itself, as raw_allocate() requires.
    static void release(void *data);

    mutable std::atomic<int64_t> m_current{0};
    mutable std::atomic<int64_t> m_peak{0};
};

} // namespace optlog
