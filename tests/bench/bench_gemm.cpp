// SPDX-License-Identifier: MIT
// The engine's matrix products at a preset's own shapes, forward and backward, on each product path
// this machine has, side by side in one run: each product's best time of ROUNDS rotated timings and its GFLOP/s, so
// that a product far below the machine's matmul peak is named rather than guessed at from a profile.
// Linear layers are timed forward and backward as the engine runs them; attention's products (the
// same two ways backward) and the head's forward one by one. ATen's FP32 products run on OpenBLAS's
// own threads, which just after a oneDNN product compete with OpenMP's still-spinning workers: its
// column is a reference, at times far slower than ATen alone (a training run uses one path).
// A BF16 precision mode (precision.mode="autocast-bf16", "master-bf16" or "pure-bf16") times the
// products on BF16 operands: LibTorch's own, the matmul primitive's and sgemm's, widened.
// `optlog tune` chooses a run's path by whole training runs; this says where the time goes.
//   build/tests/bench/bench_gemm [PRESET] [ROUNDS] [SETTING=VALUE...]
#include "core/config/config.h"
#include "core/config/tuning.h"
#include "core/engine/compat/torchcompat.h"
#include "core/engine/kernels/gemm.h"
#include "core/engine/machine/environment.h"
#include "tests/common/arguments.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

using namespace optlog;

namespace {

struct Product
{
    std::string name;
    double flops = 0;
    std::function<double(ProductPaths)> seconds; // one timing
};

double secondsOf(const std::function<void()> &run)
{
    const auto start = std::chrono::steady_clock::now();
    run();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A product's timing: `product` called on the paths, its result dropped.
std::function<double(ProductPaths)> timing(std::function<at::Tensor(ProductPaths)> product)
{
    return [product](ProductPaths paths) { return secondsOf([&] { product(paths); }); };
}

// The products of one block and of the head at the preset's shapes, with operands laid out as the
// model lays them out (attention's q, k and v are strided views of the QKV projection's output).
std::vector<Product> productsOf(const ModelConfig &m, int64_t B, at::ScalarType dtype)
{
    const auto randn = [dtype](std::vector<int64_t> shape) { return at::randn(shape).to(dtype); };
    const int64_t T = m.contextLength, C = m.width, H = m.heads, D = C / H, V = m.vocabSize, rows = B * T;
    std::vector<Product> products;
    // A linear layer forward, and its backward as the engine runs it (both gradients' products and
    // the bias's sum), after an untimed forward.
    const auto linear = [&](const std::string &name, int64_t n, int64_t k) {
        const at::Tensor x = randn({rows, k}), w = randn({n, k}), b = randn({n}), g = randn({rows, n});
        const double flops = 2.0 * double(rows * n * k);
        products.push_back({name + " forward", flops, timing([=](ProductPaths l) { return gemmLinear(x, w, b, l); })});
        products.push_back({name + " backward", 2 * flops, [=](ProductPaths l) {
                                compat::GradModeGuard gradients(true);
                                const at::Tensor y = gemmLinear(x.detach().requires_grad_(true),
                                                                w.detach().requires_grad_(true),
                                                                b.detach().requires_grad_(true), l);
                                return secondsOf([&] { y.backward(g); });
                            }});
    };
    linear("qkv", 3 * C, C);
    linear("attention proj", C, C);
    linear("mlp fc", 4 * C, C);
    linear("mlp proj", C, 4 * C);
    const std::vector<at::Tensor> parts = randn({B, T, 3, H, D}).unbind(2);
    const at::Tensor q = parts[0].transpose(1, 2), k = parts[1].transpose(1, 2), v = parts[2].transpose(1, 2);
    const at::Tensor weights = randn({B, H, T, T}), gradient = randn({B, H, T, T}), outGradient = randn({B, H, T, D});
    const double attention = 2.0 * double(B * H * T * T * D);
    const double scale = 1.0 / std::sqrt(double(D));
    const auto attentionProduct = [&](const std::string &name, const at::Tensor &a, const at::Tensor &b, double alpha) {
        products.push_back({name, attention, timing([=](ProductPaths l) { return gemmMatmul(a, b, l, alpha); })});
    };
    attentionProduct("q·kᵀ", q, k.transpose(-2, -1), scale);
    attentionProduct("weights·v", weights, v, 1.0);
    attentionProduct("dscores·k", gradient, k, scale);
    attentionProduct("qᵀ·dscores", q.transpose(-2, -1), gradient, scale);
    attentionProduct("dout·vᵀ", outGradient, v.transpose(-2, -1), 1.0);
    attentionProduct("weightsᵀ·dout", weights.transpose(-2, -1), outGradient, 1.0);
    const at::Tensor x = randn({rows, C}), head = randn({V, C});
    const double headFlops = 2.0 * double(rows * V * C);
    products.push_back({"head forward", headFlops, timing([=](ProductPaths l) { return gemmLinear(x, head, {}, l); })});
    return products;
}

} // namespace

int main(int argc, char **argv)
{
    try {
        const std::string preset = argc > 1 ? argv[1] : "default";
        const int64_t rounds = argc > 2 ? testing::wholeNumberArgument(argv[2], "ROUNDS", 1, 1000) : 20;
        const std::vector<std::string> settings(argv + std::min(argc, 3), argv + argc);
        const RunConfig config = loadRunConfig(preset, "", settings);
        if (!oneDnnGemmBuilt()) {
            std::fprintf(stderr, "bench_gemm: this build has no oneDNN path to compare with ATen's\n");
            return 1;
        }
        keepTensorMemoryInHeap(); // as a run has it: the products' outputs come from the same heap
        applyThreadSettings(config.runtime);
        compat::GradDisabledGuard noGrad;
        const std::string family = precisionFamily(config.precision.mode);
        if (family == "fp16")
            throw std::runtime_error("precision.mode \"" + config.precision.mode
                                     + "\": FP16 products are ATen's alone; expected an FP32 or BF16 mode");
        const at::ScalarType dtype = family == "bf16" ? at::kBFloat16 : at::kFloat;
        const std::vector<Product> products = productsOf(config.model, config.train.microbatch, dtype);
        const std::vector<ProductPath> paths = productPathCandidates(dtype);
        std::printf("%s, %s products, %d threads, best of %lld rotated timings; %s\n\n", preset.c_str(), family.c_str(),
                    at::get_num_threads(), static_cast<long long>(rounds), describeOneDnn().c_str());
        std::string header = "| product |", rule = "|---|";
        for (const ProductPath path : paths) {
            header += " " + describePath(path, dtype) + " ms | GFLOP/s |";
            rule += "---|---|";
        }
        std::printf("%s\n%s\n", header.c_str(), rule.c_str());
        std::vector<double> totals(paths.size(), 0.0);
        double flops = 0;
        for (const Product &p : products) {
            std::vector<double> best(paths.size(), 1e30);
            for (const ProductPath path : paths)
                p.seconds({path, path}); // warm-up: first-touch pages and packing buffers
            // Each round starts with the next path: a machine's drift falls on all of them alike.
            for (int64_t r = 0; r < rounds; ++r)
                for (size_t i = 0; i < paths.size(); ++i) {
                    const size_t which = (size_t(r) + i) % paths.size();
                    best[which] = std::min(best[which], p.seconds({paths[which], paths[which]}));
                }
            flops += p.flops;
            std::printf("| %s |", p.name.c_str());
            for (size_t i = 0; i < paths.size(); ++i) {
                totals[i] += best[i];
                std::printf(" %.3f | %.1f |", best[i] * 1e3, p.flops / best[i] / 1e9);
            }
            std::printf("\n");
        }
        std::printf("| one block and the head |");
        for (const double total : totals)
            std::printf(" %.3f | %.1f |", total * 1e3, flops / total / 1e9);
        std::printf("\n");
        return 0;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "bench_gemm: %s\n", e.what());
        return 2;
    }
}
