// SPDX-License-Identifier: MIT
#pragma once

#include "core/contract/measurements.h"
#include "core/engine/compat/torchcompat.h"

#include <c10/core/Allocator.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>

namespace optlog {

class MemoryBudgetExceeded : public std::runtime_error
{
public:
    explicit MemoryBudgetExceeded(const BudgetRefusal &refusal);
    BudgetRefusal refusal;
};

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

    c10::DataPtr allocate(size_t bytes) OPTLOG_ALLOCATE_QUALIFIER override;
    c10::DeleterFnPtr raw_deleter() const override { return &release; }
    // Required (pure virtual) from LibTorch 2.2 on, unused before: hence no `override`.
    void copy_data(void *destination, const void *source, size_t bytes) const;

    int64_t currentBytes() const { return m_current.load(std::memory_order_relaxed); }
    int64_t peakBytes() const { return m_peak.load(std::memory_order_relaxed); }
    // Starts a new high-water mark from what is in use now (after warm-up, say).
    void resetPeak() { m_peak.store(currentBytes(), std::memory_order_relaxed); }
    // The high-water mark `work` reaches above what is in use when it starts, and what it leaves in
    // use, in bytes: for optlog's own probes of a kernel. The process's high-water mark ends as if
    // `work` had run unobserved. Only where no training runs at the same time.
    struct Excursion
    {
        int64_t peakBytes = 0;
        int64_t leftBytes = 0;
    };
    Excursion excursionOf(const std::function<void()> &work);

    // A memory budget to rehearse on a CPU: an allocation that would take the bytes in use past
    // it throws MemoryBudgetExceeded (and is remembered, since LibTorch may wrap the exception).
    // 0 = no budget.
    void setBudget(int64_t bytes);
    int64_t budget() const { return m_budget.load(std::memory_order_relaxed); }
    // What the trainer is doing, named in a refusal. `phase` must be a string literal.
    void setPhase(const char *phase) { m_phase.store(phase, std::memory_order_relaxed); }
    // The first refusal since the budget was set, if any.
    std::optional<BudgetRefusal> refusal() const;
    // Whether the machine refused an allocation (std::bad_alloc) since the budget was set: known
    // here, since LibTorch may rethrow the exception as its own with the cause only in the text.
    bool machineRefused() const { return m_machineRefused.load(std::memory_order_relaxed); }

    // A test hook that makes this allocator count as a GPU's does, by known amounts, so that the
    // device calibration can be tested where no GPU is: each block counted `fraction` larger (a
    // caching allocator's rounding), and `heldBytes` taken at the first allocation of a backward
    // pass and never given back (a product library's workspace, made on autograd's thread).
    // From OPTLOG_TEST_ALLOCATOR_OVERCOUNT="FRACTION,BYTES" ("0.1,8MiB"), read once; a value that is
    // not that is refused (InputError). install() applies it.
    struct Overcount
    {
        double fraction = 0;
        int64_t heldBytes = 0;
        std::string describe() const; // "test hook: counts 10% more, holds 8.0 MiB from the first backward"
    };
    static const std::optional<Overcount> &overcount();

    // Told the bytes in use after each counted allocation and free, in the order they happened (a
    // memory timeline, steptimeline.h). Called under a lock, so it must not allocate tensors.
    class Observer
    {
    public:
        virtual ~Observer() = default;
        virtual void inUse(int64_t bytes) = 0;
    };
    // One at a time; nullptr stops. It must outlive its time as the observer.
    void setObserver(Observer *observer);

    // While one exists, allocations are neither counted nor held to the budget (nor are their
    // frees subtracted): for optlog's own measurements between steps, which are the machine's,
    // not the run's. Only where no training runs at the same time.
    class Uncounted
    {
    public:
        Uncounted() { instance().m_uncounted.fetch_add(1, std::memory_order_relaxed); }
        ~Uncounted() { instance().m_uncounted.fetch_sub(1, std::memory_order_relaxed); }
        Uncounted(const Uncounted &) = delete;
        Uncounted &operator=(const Uncounted &) = delete;
    };

private:
    CountingAllocator() = default;
    // The deleter gets only the data pointer, so the size lives in a header just before it;
    // the DataPtr's context is the data pointer itself, as raw_allocate() requires.
    static void release(void *data);
    // Adds `bytes` (negative: a free) to those in use and tells the observer: the new amount.
    int64_t count(int64_t bytes) const;

    mutable std::atomic<int64_t> m_current{0};
    mutable std::atomic<int64_t> m_peak{0};
    std::atomic<int64_t> m_budget{0};
    std::atomic<int> m_uncounted{0};
    std::atomic<const char *> m_phase{"setup"};
    mutable std::atomic<Observer *> m_observer{nullptr};
    mutable std::mutex m_observerMutex; // an observer sees the changes in the order they were counted
    mutable std::mutex m_refusalMutex;
    mutable std::optional<BudgetRefusal> m_refusal;
    mutable std::atomic<bool> m_machineRefused{false};
    std::optional<Overcount> m_overcount;             // overcount(), once installed
    mutable std::atomic<bool> m_overcountHeld{false}; // the held bytes are taken
};

} // namespace optlog
