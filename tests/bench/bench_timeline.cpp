// SPDX-License-Identifier: MIT
// What recording a step's memory timeline costs that step (core/engine/machine/steptimeline.h): the
// same training step of a preset's model, with its timeline recorded and without, alternated
// A B B A in each round. Prints each round's milliseconds a step and the median ratio recorded /
// plain, and the points and bytes of the recorded step's timeline as a study stores it.
// Usage: bench_timeline [PRESET] [ROUNDS] [STEPS] [KEY=VALUE...]   (default: default 7 4), the
// overrides as optlog's --set takes them (e.g. model.width=64).
#include "core/config/config.h"
#include "core/config/configerror.h"
#include "core/engine/data/textdata.h"
#include "core/engine/machine/environment.h"
#include "core/engine/machine/steptimeline.h"
#include "core/engine/memory/countingallocator.h"
#include "core/engine/model/languagemodel.h"
#include "core/engine/precision/precision.h"
#include "core/engine/train/accumulation.h"
#include "core/engine/train/optimizerstep.h"
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
        const int steps = argc > 3 ? int(testing::wholeNumberArgument(argv[3], "STEPS")) : 4;
        const std::vector<std::string> overrides(argv + std::min(argc, 4), argv + argc);
        const RunConfig config = loadRunConfig(preset, "", overrides);
        applyThreadSettings(config.runtime); // the engine's threads and heap thresholds
        keepTensorMemoryInHeap();
        CountingAllocator::install(); // as the engine runs: its observer is what records on a CPU
        at::manual_seed(1);
        const PrecisionPlan plan = precisionPlan(config.precision.mode);
        std::shared_ptr<LanguageModel> model = makeLanguageModel(config);
        model->setTraining(true);
        model->moveTo(c10::Device(c10::DeviceType::CPU), plan.weights);
        std::vector<at::Tensor> decayed, plain;
        for (const at::Tensor &p : model->parameterTensors())
            (p.dim() >= 2 ? decayed : plain).push_back(p);
        const auto optimizer = makeAdamW(decayed, plain, config.train);
        const TokenSplit data = loadTokens(config.data, config.model.vocabSize, config.model.contextLength);
        BatchSampler sampler(data.train, config.model.contextLength, 1);
        std::vector<Batch> batches;
        for (int64_t i = 0; i < config.train.accumulation; ++i)
            batches.push_back(sampler.next(config.train.microbatch, 0, config.train.microbatch));
        HostSyncs syncs(c10::Device(c10::DeviceType::CPU));
        TimelineRecorder recorder(c10::Device(c10::DeviceType::CPU));
        MemoryTimeline last;
        // One step as the trainer takes it, its phases marked as the trainer marks them.
        const auto step = [&] {
            accumulateGradients(*model, batches, plan);
            enterPhase(StepPart::UnscaleAndClip);
            stepUnlessNonFinite(*optimizer, model->parameterTensors(), nullptr, config.train.gradClip, syncs);
        };
        step(); // AdamW's moments exist before timing
        const auto timeSteps = [&](bool recorded) {
            double milliseconds = 0;
            for (int i = 0; i < steps; ++i) {
                const auto start = std::chrono::steady_clock::now();
                if (recorded)
                    recorder.begin(i, StepPart::Forward);
                step();
                if (recorded)
                    last = recorder.end();
                milliseconds += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                                    .count();
            }
            return milliseconds / steps;
        };
        std::printf("%s: %lld parameters, %s, %d threads\n", preset.c_str(), (long long) model->parameterElements(),
                    config.precision.mode.c_str(), at::get_num_threads());
        std::printf("round   plain-ms  recorded-ms  recorded-ms   plain-ms  ratio\n");
        std::vector<double> ratios;
        for (int round = 1; round <= rounds; ++round) {
            const double a1 = timeSteps(false), b1 = timeSteps(true), b2 = timeSteps(true), a2 = timeSteps(false);
            ratios.push_back((b1 + b2) / (a1 + a2));
            std::printf("%5d  %9.2f  %11.2f  %11.2f  %9.2f  %5.3f\n", round, a1, b1, b2, a2, ratios.back());
        }
        std::sort(ratios.begin(), ratios.end());
        std::printf("median ratio recorded / plain: %.3f (from %.3f to %.3f)\n", ratios[ratios.size() / 2],
                    ratios.front(), ratios.back());
        std::printf("the recorded step: %lld events, %zu points kept, %zu phases, %zu bytes as stored\n",
                    (long long) last.events, last.eventOfPoint.size(), last.phases.size(), timelineText(last).size());
        return 0;
    } catch (const std::invalid_argument &e) { // a bad ROUNDS or STEPS: bad input, as bench_memory's
        std::fprintf(stderr, "bench_timeline: %s\n", e.what());
        return 2;
    } catch (const optlog::ConfigError &e) { // a bad override
        std::fprintf(stderr, "bench_timeline: %s\n", e.what());
        return 2;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "bench_timeline: %s\n", e.what());
        return 1;
    }
}
