// SPDX-License-Identifier: MIT
#include "core/memorymodel/deviceterms.h"

#include "core/contract/format.h"

#include <algorithm>
#include <cstdlib>
#include <regex>

namespace optlog {

namespace {

constexpr int64_t kKiB = 1024, kMiB = 1024 * 1024;
// The caching allocator's smallest block, and the multiple every block is rounded up to.
constexpr int64_t kCudaBlockBytes = 512;
// Autograd runs backward on a thread of its own per CUDA device; the forward runs on the caller's.
constexpr int kCudaProductThreads = 2;

} // namespace

std::string ComputeCapability::text() const
{
    return std::to_string(major) + "." + std::to_string(minor);
}

std::optional<ComputeCapability> ComputeCapability::parse(const std::string &text)
{
    std::smatch match;
    static const std::regex dotted("([0-9]{1,2})\\.([0-9])"), sm("sm_([0-9]{1,2})([0-9])");
    if (std::regex_match(text, match, dotted) || std::regex_match(text, match, sm))
        return ComputeCapability{std::stoi(match.str(1)), std::stoi(match.str(2))};
    return std::nullopt;
}

int64_t DeviceTerms::workspaceBytes() const
{
    return int64_t(blasHandles) * (cublasWorkspaceBytes + cublasLtWorkspaceBytes);
}

int64_t DeviceTerms::roundingBytes(const std::vector<int64_t> &tensorBytes) const
{
    int64_t added = 0;
    for (const int64_t bytes : tensorBytes)
        added += (bytes + allocationGranuleBytes - 1) / allocationGranuleBytes * allocationGranuleBytes - bytes;
    return added;
}

std::string DeviceTerms::describe() const
{
    std::string text = device;
    text += chip.empty() ? (device == "cpu" ? std::string() : ", chip not known") : ", " + chip;
    if (capability)
        text += " (compute capability " + capability->text() + ")";
    if (!libtorchVersion.empty())
        text += ", LibTorch " + libtorchVersion;
    if (bf16ProductScratchBytes > 0)
        text += formatted(", BF16 products book %.1f B of scratch per output element (measured on %d thread%s)",
                          bf16ProductScratchBytes, productThreads, productThreads == 1 ? "" : "s");
    return text;
}

EnvironmentLookup processEnvironment()
{
    return [](const std::string &name) -> std::optional<std::string> {
        const char *value = std::getenv(name.c_str());
        return value ? std::optional<std::string>(value) : std::nullopt;
    };
}

double DeviceTerms::bf16ProductScratch(double outputElements, double batches) const
{
    // A batch: each thread books one matrix, or its share of the batch where that is less (5 x 64
    // x 128 on two threads: 2 x 32 KiB).
    return batches > 1 ? bf16BatchScratchBytes * outputElements * std::min(double(productThreads), batches)
                       : bf16ProductScratchBytes * outputElements;
}

DeviceTerms cpuDeviceTerms(const std::string &chip, const std::string &libtorchVersion, Bf16ProductScratch scratch,
                           int productThreads)
{
    DeviceTerms terms;
    terms.chip = chip;
    terms.libtorchVersion = libtorchVersion;
    terms.bf16ProductScratchBytes = scratch.singleBytes;
    terms.bf16BatchScratchBytes = scratch.batchBytes;
    terms.productThreads = std::max(1, productThreads);
    return terms;
}

DeviceTerms cudaDeviceTerms(std::optional<ComputeCapability> capability, const std::string &chip,
                            const std::string &libtorchVersion, const EnvironmentLookup &environment)
{
    DeviceTerms terms;
    terms.device = "cuda";
    terms.chip = chip;
    terms.capability = capability;
    terms.libtorchVersion = libtorchVersion;
    terms.autocastOps = AutocastOps::Cuda;
    terms.boolDropoutMasks = true;
    terms.blasHandles = kCudaProductThreads;
    terms.allocationGranuleBytes = kCudaBlockBytes;
    if (!capability)
        terms.unknown.push_back("which chip (no GPU here): the cuBLAS workspace is 32 MiB per handle on compute "
                                "capability 9.0 (Hopper) and 8.1 MiB on other chips; the larger is counted");

    const bool hopper = !capability || (capability->major == 9 && capability->minor == 0);
    int64_t cublas = hopper ? 32 * kMiB : 4096 * kKiB * 2 + 16 * kKiB * 8;
    std::string source = hopper ? "32 MiB, the default on compute capability 9.0"
                                : "4096 KiB x 2 + 16 KiB x 8, the default";
    if (const auto config = environment("CUBLAS_WORKSPACE_CONFIG")) {
        static const std::regex pair(":([0-9]+):([0-9]+)");
        int64_t total = 0;
        bool any = false;
        for (std::sregex_iterator it(config->begin(), config->end(), pair), end; it != end; ++it) {
            total += std::stoll(it->str(1)) * kKiB * std::stoll(it->str(2));
            any = true;
        }
        if (any) { // LibTorch warns and keeps the default for a value it cannot read
            cublas = total;
            source = "CUBLAS_WORKSPACE_CONFIG=" + *config;
        }
    }
    int64_t lt = 1024 * kKiB;
    std::string ltSource = "1024 KiB, the default";
    if (const auto size = environment("CUBLASLT_WORKSPACE_SIZE")) {
        try {
            lt = std::stoll(*size) * kKiB;
            ltSource = "CUBLASLT_WORKSPACE_SIZE=" + *size;
        } catch (const std::exception &) { // LibTorch warns and keeps the default
        }
    }
    lt = std::min(lt, cublas);
    const bool unified = environment("TORCH_CUBLASLT_UNIFIED_WORKSPACE").value_or("") == "1";
    terms.cublasWorkspaceBytes = cublas;
    terms.cublasLtWorkspaceBytes = unified ? 0 : lt;
    terms.workspaceSource = "cuBLAS " + source + "; cuBLASLt "
                            + (unified ? std::string("shares it (TORCH_CUBLASLT_UNIFIED_WORKSPACE=1)") : ltSource)
                            + "; per handle, " + std::to_string(kCudaProductThreads)
                            + " handles (the forward's thread, autograd's device thread)";
    return terms;
}

DeviceTerms assumedDeviceTerms(const RunConfig &config)
{
    if (config.runtime.device == "cuda")
        return cudaDeviceTerms(std::nullopt, "", "", processEnvironment());
    return cpuDeviceTerms("", "");
}

} // namespace optlog
