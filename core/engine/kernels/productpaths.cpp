// SPDX-License-Identifier: MIT
#include "core/engine/kernels/productpaths.h"

#include "core/contract/rowlookup.h"

#include <ATen/ops/matmul.h>
#include <ATen/ops/zeros.h>

#ifdef OPTLOG_HAVE_ONEDNN
#include "core/engine/kernels/matmulprimitive.h"
#include "core/engine/kernels/onednncpu.h"

#include <oneapi/dnnl/dnnl.h>
#endif

#include <algorithm>
#include <stdexcept>

namespace optlog {

namespace {

constexpr Named<ProductPath> kProductPaths[] = {{ProductPath::ATen, "aten"},
                                                {ProductPath::Sgemm, "sgemm"},
                                                {ProductPath::Primitive, "primitive"}};

} // namespace

std::string pathName(ProductPath path)
{
    return nameIn(kProductPaths, path);
}

std::optional<ProductPath> pathNamed(const std::string &name)
{
    return valueNamed(kProductPaths, name);
}

bool oneDnnGemmBuilt()
{
#ifdef OPTLOG_HAVE_ONEDNN
    return true;
#else
    return false;
#endif
}

void allowAmx()
{
#ifdef OPTLOG_HAVE_ONEDNN
    allowOneDnnAmx();
#endif
}

bool bf16PrimitiveAvailable()
{
#if defined(OPTLOG_HAVE_ONEDNN) && defined(__x86_64__)
    // oneDNN's own view, not the CPU's: ONEDNN_MAX_CPU_ISA=AVX2 on an AVX-512 machine leaves it no
    // BF16 matmul, and asking the CPU instead failed every run's start there.
    static const bool available = [] {
        allowAmx(); // before oneDNN's ISA is read, which fixes it for the process
        return (dnnl_get_effective_cpu_isa() & dnnl_cpu_isa_avx512_core) == dnnl_cpu_isa_avx512_core;
    }();
    return available;
#else
    return false;
#endif
}

namespace {

// Whether oneDNN's paths take BF16 products: on x86-64. Elsewhere (an ARM build of oneDNN) they
// stay LibTorch's, as before either path existed.
constexpr bool bf16OnOneDnn()
{
#ifdef __x86_64__
    return true;
#else
    return false;
#endif
}

} // namespace

ProductPaths ProductPaths::onednn()
{
    if (!oneDnnGemmBuilt())
        return aten();
    if (!bf16OnOneDnn())
        return {ProductPath::Sgemm, ProductPath::ATen};
    return {ProductPath::Sgemm, bf16PrimitiveAvailable() ? ProductPath::Primitive : ProductPath::Sgemm};
}

std::vector<ProductPath> productPathCandidates(at::ScalarType dtype)
{
    if (!oneDnnGemmBuilt() || (dtype != at::kFloat && dtype != at::kBFloat16)
        || (dtype == at::kBFloat16 && !bf16OnOneDnn()))
        return {ProductPath::ATen};
    if (dtype == at::kFloat)
        return {ProductPath::Sgemm, ProductPath::Primitive, ProductPath::ATen};
    if (bf16PrimitiveAvailable())
        return {ProductPath::Primitive, ProductPath::ATen, ProductPath::Sgemm};
    // LibTorch's BF16 products are its scalar one-thread kernel here: they never win, and a
    // tuning's runs on them took minutes.
    return {ProductPath::Sgemm};
}

ProductPaths productPathsFrom(const std::string &setting, at::ScalarType compute, const std::string &tuned)
{
    const ProductPaths defaults = ProductPaths::onednn();
    const auto available = [](ProductPath path, at::ScalarType dtype) {
        const std::vector<ProductPath> candidates = productPathCandidates(dtype);
        return path == ProductPath::ATen || std::find(candidates.begin(), candidates.end(), path) != candidates.end();
    };
    if (setting == "auto" || setting == "onednn") {
        ProductPaths paths = defaults;
        const std::optional<ProductPath> measured = pathNamed(tuned);
        if (setting == "auto" && measured && available(*measured, compute))
            (compute == at::kBFloat16 ? paths.bfloat16 : paths.float32) = *measured;
        return paths;
    }
    const std::optional<ProductPath> path = pathNamed(setting);
    if (!path)
        throw std::runtime_error("runtime.gemm = \"" + setting
                                 + "\": expected \"auto\" (the path optlog tune measured fastest here), \"onednn\", "
                                   "\"aten\", \"sgemm\" or \"primitive\"");
    if (*path != ProductPath::ATen && !oneDnnGemmBuilt())
        throw std::runtime_error("runtime.gemm = \"" + setting
                                 + "\": this build of optlog has no oneDNN (built without libdnnl-dev's header, or "
                                   "against a LibTorch without a system oneDNN); use \"auto\" or \"aten\"");
    ProductPaths paths{*path, *path};
    if (!available(*path, at::kBFloat16)) {
        if (compute == at::kBFloat16)
            throw std::runtime_error("runtime.gemm = \"" + setting
                                     + "\": oneDNN has no BF16 matmul on this CPU (it needs AVX-512, or "
                                       "ONEDNN_MAX_CPU_ISA caps it); use \"auto\", \"sgemm\" or \"aten\"");
        paths.bfloat16 = defaults.bfloat16;
    }
    return paths;
}

std::string describeBuildPaths()
{
#ifdef OPTLOG_HAVE_ONEDNN
    return "aten, sgemm and primitive: LibTorch links the system's oneDNN, which the engine calls too";
#else
    return "aten alone: this LibTorch keeps its oneDNN hidden inside libtorch_cpu (as PyPI's wheels do), so "
           "every product runs as LibTorch runs it (docs/benchmarks.md)";
#endif
}

std::string describeOneDnn()
{
#ifdef OPTLOG_HAVE_ONEDNN
    const OneDnnCpu cpu = oneDnnCpu();
    return cpu.version + ", " + cpu.isa + ", AMX " + cpu.amx;
#else
    return "no oneDNN";
#endif
}

std::string primitiveKernel(at::ScalarType dtype)
{
#ifdef OPTLOG_HAVE_ONEDNN
    return matmulPrimitiveImplementation(dtype);
#else
    return "";
#endif
}

std::string kernelsReached(ProductPath path, at::ScalarType dtype)
{
    std::string reached;
#ifdef OPTLOG_HAVE_ONEDNN
    const OneDnnCpu cpu = oneDnnCpu();
    if (path == ProductPath::Primitive)
        reached = cpu.version + ", " + primitiveKernel(dtype);
    else if (path == ProductPath::Sgemm)
        reached = cpu.version + ", " + cpu.isa;
    else if (dtype == at::kBFloat16) // LibTorch's own, on oneDNN through ideep: one product, logged
        reached = cpu.version + ", " + oneDnnImplementationsOf([] {
                      const at::Tensor square = at::zeros({256, 256}, at::TensorOptions().dtype(at::kBFloat16));
                      at::matmul(square, square);
                  });
#endif
    if (reached.empty())
        reached = dtype == at::kFloat ? "LibTorch's BLAS" : "LibTorch's kernels";
    return reached;
}

std::string describePath(ProductPath path, at::ScalarType dtype)
{
    const bool widened = path == ProductPath::Sgemm && dtype == at::kBFloat16;
    return pathName(path) + (widened ? ", widened" : "") + " (" + kernelsReached(path, dtype) + ")";
}

std::map<std::string, int64_t> primitiveKernelsMade()
{
#ifdef OPTLOG_HAVE_ONEDNN
    return matmulPrimitivesMade();
#else
    return {};
#endif
}

} // namespace optlog
