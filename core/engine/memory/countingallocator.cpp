// SPDX-License-Identifier: MIT
#include "core/engine/memory/countingallocator.h"

#include "core/config/config.h"
#include "core/contract/format.h"
#include "core/contract/inputerror.h"

#include <c10/core/CPUAllocator.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string_view>

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

CountingAllocator::Excursion CountingAllocator::excursionOf(const std::function<void()> &work)
{
    const int64_t outerPeak = peakBytes(), before = currentBytes();
    resetPeak();
    work();
    const Excursion excursion{peakBytes() - before, currentBytes() - before};
    m_peak.store(std::max(outerPeak, peakBytes()), std::memory_order_relaxed);
    return excursion;
}

void CountingAllocator::install()
{
    if (overcount() && !instance().m_overcount) // set once, before any allocation reads it
        instance().m_overcount = overcount();
    c10::SetCPUAllocator(&instance(), kPriority);
}

const std::optional<CountingAllocator::Overcount> &CountingAllocator::overcount()
{
    // A throw leaves it unset, so that the next call refuses the value again.
    static const std::optional<Overcount> hook = []() -> std::optional<Overcount> {
        const char *value = std::getenv("OPTLOG_TEST_ALLOCATOR_OVERCOUNT");
        if (!value)
            return std::nullopt;
        const std::string text = value;
        const auto comma = text.find(',');
        Overcount overcount;
        try {
            size_t used = 0;
            overcount.fraction = std::stod(text.substr(0, comma), &used);
            if (comma == std::string::npos || used != comma || overcount.fraction < 0 || overcount.fraction > 1)
                throw std::invalid_argument(text);
            overcount.heldBytes = parseBytes(text.substr(comma + 1), "OPTLOG_TEST_ALLOCATOR_OVERCOUNT");
        } catch (const std::exception &) {
            throw InputError("OPTLOG_TEST_ALLOCATOR_OVERCOUNT = \"" + text
                             + "\": expected FRACTION,BYTES with a fraction from 0 to 1, such as \"0.1,8MiB\" (a "
                               "test hook; unset it to count exactly)");
        }
        return overcount;
    }();
    return hook;
}

std::string CountingAllocator::Overcount::describe() const
{
    return "test hook: counts " + std::to_string(int(fraction * 100 + 0.5)) + "% more, holds " + formatBytes(heldBytes)
           + " from the first backward";
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
    // The header: the bytes counted (0 when not), so that its free matches.
    int64_t countedBytes = counted ? int64_t(bytes) : 0;
    if (counted && m_overcount) {
        countedBytes += std::llround(double(bytes) * m_overcount->fraction);
        if (std::string_view(m_phase.load(std::memory_order_relaxed)) == "backward"
            && !m_overcountHeld.exchange(true, std::memory_order_relaxed))
            count(m_overcount->heldBytes);
    }
    static_cast<size_t *>(base)[0] = size_t(countedBytes);
    void *data = static_cast<char *>(base) + kHeader;
    if (!counted)
        return {data, data, &release, c10::Device(c10::DeviceType::CPU)};

    const int64_t now = count(countedBytes);
    int64_t peak = m_peak.load(std::memory_order_relaxed);
    while (now > peak && !m_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
    return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
}

void CountingAllocator::setObserver(Observer *observer)
{
    std::lock_guard<std::mutex> lock(m_observerMutex);
    m_observer.store(observer, std::memory_order_release);
}

int64_t CountingAllocator::count(int64_t bytes) const
{
    if (!m_observer.load(std::memory_order_acquire))
        return m_current.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    std::lock_guard<std::mutex> lock(m_observerMutex);
    const int64_t now = m_current.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    if (Observer *observer = m_observer.load(std::memory_order_relaxed))
        observer->inUse(now);
    return now;
}

void CountingAllocator::release(void *data)
{
    if (!data)
        return;
    void *base = static_cast<char *>(data) - kHeader;
    const size_t countedBytes = static_cast<size_t *>(base)[0];
    if (countedBytes != 0)
        instance().count(-int64_t(countedBytes));
    std::free(base);
}

} // namespace optlog
