// SPDX-License-Identifier: MIT
// The CPU-only build: runDevice() refuses runtime.device = "cuda" before any of these is reached.
#include "core/engine/machine/cudasupport.h"

#include <stdexcept>

namespace optlog::cuda {

namespace {
[[noreturn]] void notBuilt()
{
    throw std::logic_error("optlog was built without CUDA");
}
} // namespace

bool built()
{
    return false;
}
MemoryStats memoryStats(int)
{
    notBuilt();
}
void resetPeakStats(int)
{
    notBuilt();
}
void releaseCachedMemory()
{
    notBuilt();
}
void *allocateOutsideCache(size_t)
{
    notBuilt();
}
int deviceCount()
{
    return 0;
}
std::string runtimeVersion()
{
    return {};
}
std::string deviceDescription(int)
{
    notBuilt();
}
std::string deviceName(int)
{
    notBuilt();
}
std::pair<int, int> computeCapability(int)
{
    notBuilt();
}

int64_t countSynchronisations(const std::function<void()> &)
{
    return -1;
}

} // namespace optlog::cuda
