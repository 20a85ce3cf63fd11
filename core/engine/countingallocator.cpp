// SPDX-License-Identifier: MIT
#include "core/engine/countingallocator.h"

#include <c10/core/CPUAllocator.h>
#include <c10/util/Exception.h>

#include <cstdlib>
#include <new>

namespace optlog {

namespace {

// LibTorch aligns CPU tensors to 64 bytes (AVX-512); the header keeps that alignment.
constexpr size_t kAlignment = 64;
constexpr size_t kHeader = kAlignment;

// Above LibTorch's own registration (priority 0), so ours wins whatever the load order.
constexpr uint8_t kPriority = 100;

} // namespace

CountingAllocator &CountingAllocator::instance()
{
    static CountingAllocator allocator;
    return allocator;
}

void CountingAllocator::install() { c10::SetCPUAllocator(&instance(), kPriority); }

c10::DataPtr CountingAllocator::allocate(size_t bytes) const
{
    void *base = nullptr;
    if (posix_memalign(&base, kAlignment, kHeader + bytes) != 0)
        throw std::bad_alloc();
    *static_cast<size_t *>(base) = bytes;
    void *data = static_cast<char *>(base) + kHeader;

    const int64_t now = m_current.fetch_add(int64_t(bytes), std::memory_order_relaxed) + int64_t(bytes);
    int64_t peak = m_peak.load(std::memory_order_relaxed);
    while (now > peak && !m_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
    return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
}

void CountingAllocator::release(void *data)
{
    if (!data)
        return;
    void *base = static_cast<char *>(data) - kHeader;
    const size_t bytes = *static_cast<size_t *>(base);
    instance().m_current.fetch_sub(int64_t(bytes), std::memory_order_relaxed);
    std::free(base);
}

} // namespace optlog
