// SPDX-License-Identifier: MIT
#include "core/engine/memory/countingallocator.h"

#include "core/contract/format.h"

#include <c10/core/CPUAllocator.h>
#include <c10/util/Exception.h>

#include <cstdlib>
#include <cstring>
#include <new>

namespace optlog {

namespace {

// LibTorch aligns CPU tensors to 64 bytes (AVX-512); the header keeps that alignment.
constexpr size_t kAlignment = 64;
constexpr size_t kHeader = kAlignment;

// Above LibTorch's own registration (priority 0), so ours wins whatever the load order.
constexpr uint8_t kPriority = 100;

} // namespace

MemoryBudgetExceeded::MemoryBudgetExceeded(const BudgetRefusal &r)
    : std::runtime_error("out of memory budget in the " + r.phase + ": " + formatBytes(r.requestedBytes)
                         + " requested with " + formatBytes(r.inUseBytes) + " in use; the budget is "
                         + formatBytes(r.budgetBytes))
    , refusal(r)
{ }

CountingAllocator &CountingAllocator::instance()
{
    static CountingAllocator allocator;
    return allocator;
}

void CountingAllocator::install()
{
    c10::SetCPUAllocator(&instance(), kPriority);
}

void CountingAllocator::setBudget(int64_t bytes)
{
    std::lock_guard<std::mutex> lock(m_refusalMutex);
    m_refusal.reset();
    m_machineRefused.store(false, std::memory_order_relaxed);
    m_budget.store(bytes, std::memory_order_relaxed);
}

std::optional<BudgetRefusal> CountingAllocator::refusal() const
{
    std::lock_guard<std::mutex> lock(m_refusalMutex);
    return m_refusal;
}

void CountingAllocator::copy_data(void *destination, const void *source, size_t bytes) const
{
    std::memcpy(destination, source, bytes);
}

c10::DataPtr CountingAllocator::allocate(size_t bytes) OPTLOG_ALLOCATE_QUALIFIER
{
    const bool counted = m_uncounted.load(std::memory_order_relaxed) == 0;
    const int64_t budget = m_budget.load(std::memory_order_relaxed);
    if (counted && budget > 0 && currentBytes() + int64_t(bytes) > budget) {
        BudgetRefusal r{int64_t(bytes), currentBytes(), budget, m_phase.load(std::memory_order_relaxed)};
        {
            std::lock_guard<std::mutex> lock(m_refusalMutex);
            if (!m_refusal)
                m_refusal = r;
        }
        throw MemoryBudgetExceeded(r);
    }
    void *base = nullptr;
    if (posix_memalign(&base, kAlignment, kHeader + bytes) != 0) {
        m_machineRefused.store(true, std::memory_order_relaxed);
        throw std::bad_alloc();
    }
    // The header: the size, then whether it was counted (so that its free matches).
    static_cast<size_t *>(base)[0] = bytes;
    static_cast<size_t *>(base)[1] = counted ? 1 : 0;
    void *data = static_cast<char *>(base) + kHeader;
    if (!counted)
        return {data, data, &release, c10::Device(c10::DeviceType::CPU)};

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
    const size_t bytes = static_cast<size_t *>(base)[0];
    if (static_cast<size_t *>(base)[1] != 0)
        instance().m_current.fetch_sub(int64_t(bytes), std::memory_order_relaxed);
    std::free(base);
}

} // namespace optlog
