// SPDX-License-Identifier: MIT
// The optimizer step alone: LibTorch's AdamW against the one-pass FusedAdamW on the parameters of a
// preset's model, alternated A B B A in each round, with clipping as the trainer clips. Prints each
// round's milliseconds a step and the median ratio LibTorch / one pass.
// Usage: bench_adamw [PRESET] [ROUNDS] [STEPS] [KEY=VALUE...]   (default: default 7 20), the
// overrides as optlog's --set takes them (e.g. model.width=64).
#include "core/config/config.h"
#include "core/config/configerror.h"
#include "core/engine/machine/environment.h"
#include "core/engine/model/gpt.h"
#include "core/engine/train/trainer.h"
#include "tests/common/arguments.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/optim/adamw.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

using namespace optlog;

int main(int argc, char **argv)
{
    try {
        const std::string preset = argc > 1 ? argv[1] : "default";
        const int rounds = argc > 2 ? int(testing::wholeNumberArgument(argv[2], "ROUNDS")) : 7;
        const int steps = argc > 3 ? int(testing::wholeNumberArgument(argv[3], "STEPS")) : 20;
        const std::vector<std::string> overrides(argv + std::min(argc, 4), argv + argc);
        const RunConfig config = loadRunConfig(preset, "", overrides);
        applyThreadSettings(config.runtime); // the engine's threads and heap thresholds
        keepTensorMemoryInHeap();
        at::manual_seed(1);
        GPT models[2] = {GPT(GPTOptions::from(config)), GPT(GPTOptions::from(config))};
        std::unique_ptr<torch::optim::AdamW> optimizers[2];
        int64_t elements = 0;
        for (int side = 0; side < 2; ++side) {
            for (const auto &p : models[side]->parameters()) {
                p.mutable_grad() = at::randn_like(p) * 1e-2;
                elements += side == 0 ? p.numel() : 0;
            }
            std::vector<at::Tensor> decayed, plain;
            for (const auto &p : models[side]->parameters())
                (p.dim() >= 2 ? decayed : plain).push_back(p);
            optimizers[side] = makeAdamW(decayed, plain, config.train, /*libtorchStep=*/side == 0);
            optimizers[side]->step(); // the moments exist before timing
        }
        const auto timeSteps = [&](int side) {
            const auto start = std::chrono::steady_clock::now();
            HostSyncs syncs(c10::Device(c10::DeviceType::CPU));
            for (int i = 0; i < steps; ++i)
                stepUnlessNonFinite(*optimizers[side], models[side]->parameters(), nullptr, config.train.gradClip,
                                    syncs);
            return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / steps;
        };
        std::printf("%s: %lld parameters, %d threads, clipping at %g\n", preset.c_str(), (long long) elements,
                    at::get_num_threads(), config.train.gradClip);
        std::printf("round  libtorch-ms  one-pass-ms  one-pass-ms  libtorch-ms  ratio\n");
        std::vector<double> ratios;
        for (int round = 1; round <= rounds; ++round) {
            const double a1 = timeSteps(0), b1 = timeSteps(1), b2 = timeSteps(1), a2 = timeSteps(0);
            ratios.push_back((a1 + a2) / (b1 + b2));
            std::printf("%5d  %11.2f  %11.2f  %11.2f  %11.2f  %5.2f\n", round, a1, b1, b2, a2, ratios.back());
        }
        std::sort(ratios.begin(), ratios.end());
        std::printf("median ratio LibTorch / one pass: %.2f\n", ratios[ratios.size() / 2]);
        return 0;
    } catch (const std::invalid_argument &e) { // a bad ROUNDS or STEPS: bad input, as bench_memory's
        std::fprintf(stderr, "bench_adamw: %s\n", e.what());
        return 2;
    } catch (const optlog::ConfigError &e) { // a bad override
        std::fprintf(stderr, "bench_adamw: %s\n", e.what());
        return 2;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "bench_adamw: %s\n", e.what());
        return 1;
    }
}
