// SPDX-License-Identifier: MIT
// Where a training step's time goes: LibTorch's profiler over steady steps, each operation's own
// time (its duration less its children's) given to the nearest enclosing operation of a known
// kind: GEMMs (ATen's, and oneDNN's in the `optlog::gemm` scope), attention's softmax and mask,
// LayerNorm, GELU, cross-entropy, copies and casts (outside a GEMM: a GEMM's own reshaping
// copies count as the GEMM's), the optimizer step
// (AdamW and clipping, the trainer's `optlog::optimizer_step` scope), the batch draw
// (`optlog::data`), other operations, and the time outside any operation. The GEMM share beside
// MFU says how much of the step the matmul peak can describe at all. The profiler adds its own
// cost to every operation, so small operations weigh a little more here than unprofiled.
// With a fourth argument `ops`, a second table gives the twenty operations of most own time by name
// and input shapes (recording the shapes costs a little more profiling time). Settings after
// `--set` change the preset's as `optlog run --set` does (a TorchScript module, say).
//   build/tests/bench/bench_profile [PRESET] [PRECISION] [STEPS] [ops|-] [--set KEY=VALUE ...]
#include "core/config/config.h"
#include "core/engine/machine/environment.h"
#include "core/engine/memory/countingallocator.h"
#include "core/engine/train/trainer.h"
#include "tests/common/arguments.h"

#include <torch/csrc/autograd/profiler_legacy.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

using namespace optlog;
namespace profiler = torch::autograd::profiler;

namespace {

// The kind of an operation by its name; empty when it is not one of the named kinds.
std::string kindOf(const std::string &name)
{
    static const std::vector<std::pair<std::string, std::vector<std::string>>> kinds = {
        {"GEMM (matmul, linear)",
         {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul", "aten::linear", "optlog::gemm"}},
        {"attention softmax and mask",
         {"aten::softmax", "aten::_softmax", "aten::_softmax_backward_data", "aten::masked_fill", "aten::masked_fill_",
          "aten::triu"}},
        {"LayerNorm", {"aten::layer_norm", "aten::native_layer_norm", "aten::native_layer_norm_backward"}},
        {"GELU", {"aten::gelu", "aten::gelu_backward"}},
        {"cross-entropy",
         {"aten::cross_entropy_loss", "aten::log_softmax", "aten::_log_softmax", "aten::_log_softmax_backward_data",
          "aten::nll_loss", "aten::nll_loss_nd", "aten::nll_loss_forward", "aten::nll_loss_backward"}},
        {"copies and casts (autocast's among them)",
         {"aten::to", "aten::_to_copy", "aten::copy_", "aten::contiguous", "aten::clone"}},
        {"optimizer step (AdamW, clipping)", {"optlog::optimizer_step"}},
        {"batch draw", {"optlog::data"}},
    };
    for (const auto &[kind, names] : kinds)
        for (const auto &n : names)
            if (name == n)
                return kind;
    return "";
}

// " [8, 128, 1024] [1024]": an operation's input shapes, as the profiler recorded them.
std::string shapesOf(const profiler::LegacyEvent &event)
{
    std::string out;
    for (const auto &shape : event.shapes()) {
        out += " [";
        for (size_t i = 0; i < shape.size(); ++i)
            out += (i ? ", " : "") + std::to_string(shape[i]);
        out += "]";
    }
    return out;
}

// Each operation's own time, by the kind of its nearest enclosing operation of a known kind, or
// (byName) by the operation's own name.
std::map<std::string, double> ownTimeByKind(const profiler::thread_event_lists &threads, bool byName = false)
{
    std::map<std::string, double> seconds;
    for (const auto &events : threads) {
        struct Open
        {
            const profiler::LegacyEvent *push;
            std::string kind;
            double children = 0;
        };
        std::vector<Open> stack;
        for (const auto &event : events) {
            if (event.kindStr() == "push") {
                std::string kind = byName ? event.name() + shapesOf(event) : kindOf(event.name());
                if (kind.empty())
                    kind = stack.empty() ? "other operations" : stack.back().kind;
                stack.push_back({&event, kind});
            } else if (event.kindStr() == "pop" && !stack.empty()) {
                const Open open = stack.back();
                stack.pop_back();
                const double duration = open.push->cpuElapsedUs(event) / 1e6;
                seconds[open.kind] += duration - open.children;
                if (!stack.empty())
                    stack.back().children += duration;
            }
        }
    }
    return seconds;
}

// Operations the profiler recorded (nested ones included): what a per-operation cost multiplies.
int64_t operationCount(const profiler::thread_event_lists &threads)
{
    int64_t count = 0;
    for (const auto &events : threads)
        for (const auto &event : events)
            count += event.kindStr() == "push";
    return count;
}

// Starts the profiler after warm-up and stops it after the last step, timing the steps between.
class Profiling : public TrainingObserver
{
public:
    Profiling(int64_t firstProfiled, int64_t lastStep, bool shapes)
        : m_first(firstProfiled)
        , m_last(lastStep)
        , m_shapes(shapes)
    { }
    void step(const StepMetrics &m) override
    {
        if (m.step == m_first - 1) {
            profiler::enableProfilerLegacy(
                torch::profiler::impl::ProfilerConfig(torch::profiler::impl::ProfilerState::CPU, m_shapes));
            m_start = std::chrono::steady_clock::now();
        } else if (m.step == m_last) {
            wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
            events = profiler::disableProfilerLegacy();
            steps = m_last - m_first + 1;
        }
    }
    profiler::thread_event_lists events;
    double wallSeconds = 0;
    int64_t steps = 0;

private:
    int64_t m_first, m_last;
    bool m_shapes;
    std::chrono::steady_clock::time_point m_start;
};

} // namespace

int main(int argc, char **argv)
{
    // As `optlog run`'s launcher does untuned (app/launcher.cpp), a value already set kept. OpenMP
    // reads it as the process starts, so the process starts again with it.
    if (!std::getenv("OMP_WAIT_POLICY")) {
        setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
        execv("/proc/self/exe", argv);
    }
    std::vector<std::string> positional, settings;
    for (int i = 1; i < argc; ++i) {
        if (std::string(argv[i]) == "--set" && i + 1 < argc)
            settings.push_back(argv[++i]);
        else
            positional.push_back(argv[i]);
    }
    const std::string preset = positional.size() > 0 ? positional[0] : "default";
    const std::string precision = positional.size() > 1 ? positional[1] : "fp32";
    int64_t steps = 20;
    RunConfig config;
    try {
        if (positional.size() > 2)
            steps = testing::wholeNumberArgument(positional[2], "STEPS", 2, 1'000'000);
        // The preset's memory warm-up may be longer than a short profile: the profiler's is used.
        std::vector<std::string> overrides = {"data.corpus=\"generated\"",
                                              "train.steps=" + std::to_string(steps),
                                              "train.eval_interval=1000000",
                                              "precision.mode=\"" + precision + "\"",
                                              "runtime.speed_probe_every=0",
                                              "memory.warmup_steps=" + std::to_string(std::min<int64_t>(5, steps / 2))};
        overrides.insert(overrides.end(), settings.begin(), settings.end());
        config = loadRunConfig(preset, "", overrides);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "bench_profile: %s\n", e.what());
        return 2;
    }
    keepTensorMemoryInHeap();
    applyThreadSettings(config.runtime);
    CountingAllocator::install();
    const int64_t warmup = config.memory.warmupSteps;
    const bool ops = positional.size() > 3 && positional[3] == "ops";
    Profiling profiling(warmup, steps - 1, ops);
    std::atomic<bool> stop{false};
    Trainer trainer(config, loadTokens(config.data, config.model.vocabSize, config.model.contextLength), 1);
    const TrainingOutcome outcome = trainer.run(profiling, stop);
    if (outcome.outcome != Outcome::Completed || profiling.steps <= 0) {
        std::fprintf(stderr, "bench_profile: the run did not complete: %s\n", outcome.message.c_str());
        return 1;
    }
    std::map<std::string, double> seconds = ownTimeByKind(profiling.events);
    double inOperations = 0;
    for (const auto &[kind, s] : seconds)
        inOperations += s;
    seconds["outside operations (loop, autograd engine)"] = std::max(0.0, profiling.wallSeconds - inOperations);
    std::printf("| %s, %s, %lld profiled steps, %.1f ms and %lld operations a step | share of the step |\n|---|---|\n",
                preset.c_str(), precision.c_str(), static_cast<long long>(profiling.steps),
                1e3 * profiling.wallSeconds / double(profiling.steps),
                static_cast<long long>(operationCount(profiling.events) / profiling.steps));
    std::vector<std::pair<double, std::string>> rows;
    for (const auto &[kind, s] : seconds)
        rows.push_back({s, kind});
    std::sort(rows.rbegin(), rows.rend());
    for (const auto &[s, kind] : rows)
        std::printf("| %s | %.1f%% |\n", kind.c_str(), 100 * s / profiling.wallSeconds);
    if (ops) {
        std::vector<std::pair<double, std::string>> byName;
        for (const auto &[name, s] : ownTimeByKind(profiling.events, true))
            byName.push_back({s, name});
        std::sort(byName.rbegin(), byName.rend());
        std::printf("\n| operation (own time) | ms a step | share of the step |\n|---|---|---|\n");
        for (size_t i = 0; i < std::min<size_t>(20, byName.size()); ++i)
            std::printf("| %s | %.2f | %.1f%% |\n", byName[i].second.c_str(),
                        1e3 * byName[i].first / double(profiling.steps), 100 * byName[i].first / profiling.wallSeconds);
    }
    return 0;
}
