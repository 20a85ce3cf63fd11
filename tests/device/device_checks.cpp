// SPDX-License-Identifier: MIT
// The techniques' checks that depend on the device, runnable where Qt is not: on the CPU in every
// test run (CTest: device_checks_cpu), and on a GPU server against a CUDA LibTorch
// (tools/cuda/check.sh). Each check prints PASS or FAIL with what it measured; any FAIL makes the
// exit status 1.
//
//   device_checks --device cpu|cuda [--only NAME]
#include "core/config/config.h"
#include "core/engine/compat/torchcompat.h"
#include "core/engine/data/textdata.h"
#include "core/engine/machine/cudasupport.h"
#include "core/engine/machine/device.h"
#include "core/engine/memory/countingallocator.h"
#include "core/engine/model/gpt.h"
#include "core/engine/precision/precision.h"
#include "core/engine/train/trainer.h"
#include "tests/common/gradientcheck.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/optim/adamw.h>
#include <torch/utils.h>
#include <torch/version.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

using namespace optlog;
using optlog::testing::largestDifference;

namespace {

class Checks
{
public:
    void expect(bool ok, const std::string &name, const std::string &detail)
    {
        std::printf("%s %s: %s\n", ok ? "PASS" : "FAIL", name.c_str(), detail.c_str());
        std::fflush(stdout);
        (ok ? m_passed : m_failed) += 1;
    }
    int failed() const { return m_failed; }
    int passed() const { return m_passed; }

private:
    int m_passed = 0;
    int m_failed = 0;
};

std::string format(const char *pattern, double a, double b = 0, double c = 0)
{
    char text[256];
    std::snprintf(text, sizeof text, pattern, a, b, c);
    return text;
}

class Recording : public TrainingObserver
{
public:
    std::atomic<bool> stop{false};
    std::vector<StepMetrics> steps;
    std::vector<MemoryTimeline> timelines;
    void step(const StepMetrics &m) override { steps.push_back(m); }
    void memoryTimeline(const MemoryTimeline &timeline) override { timelines.push_back(timeline); }

    const MemoryTimeline *measuredTimeline() const
    {
        for (const MemoryTimeline &timeline : timelines)
            if (timeline.measuredStep)
                return &timeline;
        return nullptr;
    }
};

// The dtypes each mode must show on the tensors, written out independently of the precision table
// (core/contract/precisionmodes.h): weights, gradients, master, moments, compute.
const std::map<std::string, std::vector<std::string>> kDtypeTable = {
    {"fp32", {"float32", "float32", "none", "float32", "float32"}},
    {"autocast-bf16", {"float32", "float32", "none", "float32", "bfloat16"}},
    {"autocast-fp16", {"float32", "float32", "none", "float32", "float16"}},
    {"master-bf16", {"bfloat16", "bfloat16", "float32", "float32", "bfloat16"}},
    {"master-fp16", {"float16", "float16", "float32", "float32", "float16"}},
    {"pure-bf16", {"bfloat16", "bfloat16", "none", "bfloat16", "bfloat16"}},
};

// Each mode the device runs trains the smoke model, with the dtypes of the table read from the
// tensors, a measured peak, (FP16) a loss scale in every step's metrics, and a memory timeline of
// its measured step whose highest point is that peak.
void eachModeTrains(Checks &checks, const std::string &deviceName)
{
    for (const auto &[mode, expected] : kDtypeTable) {
        const std::vector<std::string> overrides = {"data.corpus=generated", "precision.mode=" + mode,
                                                    "runtime.device=" + deviceName};
        const std::string name = "trains/" + mode;
        if (precisionModeNamed(mode).cudaOnly && deviceName != "cuda") {
            try {
                loadRunConfig("smoke", "", overrides);
                checks.expect(false, name, "an FP16 mode was accepted on the CPU");
            } catch (const ConfigError &e) {
                checks.expect(std::strstr(e.what(), "needs a CUDA device") != nullptr, name,
                              std::string("refused: ") + e.what());
            }
            continue;
        }
        const RunConfig config = loadRunConfig("smoke", "", overrides);
        Trainer trainer(config, loadTokens(config.data, config.model.vocabSize, config.model.contextLength), 1234);
        const double before = trainer.validate().loss;
        Recording observer;
        const TrainingOutcome outcome = trainer.run(observer, observer.stop);
        const double after = trainer.validate().loss;
        const std::vector<std::string> actual = {outcome.dtypes.at("weights"), outcome.dtypes.at("gradients"),
                                                 outcome.dtypes.at("master_weights"),
                                                 outcome.dtypes.at("optimizer_state"), outcome.dtypes.at("compute")};
        std::map<std::string, int64_t> bytes;
        for (const auto &row : outcome.measuredMemory)
            bytes[memoryRoleName(row.role)] = row.bytes;
        bool scaled = !precisionPlan(mode).lossScaling;
        if (!scaled && !observer.steps.empty())
            scaled = observer.steps.back().lossScale > 0;
        const bool reservedOk = deviceName != "cuda" || bytes["peak_reserved"] >= bytes["peak"];
        std::string dtypes;
        for (const auto &d : actual)
            dtypes += (dtypes.empty() ? "" : " ") + d;
        std::string detail = outcomeName(outcome.outcome) + std::string(", validation ")
                             + format("%.3f -> %.3f", before, after) + ", dtypes " + dtypes
                             + format(", peak %.2f MiB", double(bytes["peak"]) / 1048576.0);
        if (deviceName == "cuda")
            detail += format(", reserved %.2f MiB", double(bytes["peak_reserved"]) / 1048576.0);
        if (precisionPlan(mode).lossScaling && !observer.steps.empty())
            detail += format(", last loss scale %g", observer.steps.back().lossScale);
        // The measured step's memory timeline (on CUDA read at the phase marks): its highest point
        // is the run's peak, to the byte.
        const MemoryTimeline *timeline = observer.measuredTimeline();
        const bool timelineOk = timeline && timeline->peakBytes() == bytes["peak"] && timeline->peakPhase() >= 0
                                && timeline->source == (deviceName == "cuda" ? "phase marks" : "allocations");
        if (timeline)
            detail += format(", timeline peak %.2f MiB over %.0f phases", double(timeline->peakBytes()) / 1048576.0,
                             double(timeline->phases.size()))
                      + " at " + timeline->phases[size_t(std::max<int64_t>(0, timeline->peakPhase()))].name() + " ("
                      + timeline->source + ")";
        checks.expect(outcome.outcome == Outcome::Completed && after < before - 1.0 && actual == expected
                          && bytes["peak"] > 0 && scaled && reservedOk && timelineOk,
                      name, detail);
    }
}

// The scaler on the device's tensors: an inf skips the step and halves the scale.
void scalerSkipsAnInf(Checks &checks, c10::Device device)
{
    LossScaler scaler(1024.0, 3, 0.5, 2.0, device);
    at::Tensor w = at::ones({4}, at::TensorOptions().device(device)).requires_grad_(true);
    FusedAdamW optimizer({w}, torch::optim::AdamWOptions(0.1));
    scaler.scale((w * 2).sum()).backward();
    {
        compat::GradDisabledGuard noGrad;
        w.mutable_grad()[2].fill_(INFINITY);
    }
    const at::Tensor before = w.detach().clone();
    // The trainer's step: on the device, skipped there where LibTorch has a fused AdamW.
    HostSyncs syncs(device);
    const StepGate gate = stepUnlessNonFinite(optimizer, {w}, &scaler, 1.0, syncs);
    const double skipped = gate.skip.item<double>();
    checks.expect(skipped == 1 && at::equal(w.detach(), before) && scaler.currentScale() == 512.0, "scaler/inf-skips",
                  format("skipped %g, scale %g, host reads in the step %lld", skipped, scaler.currentScale(),
                         (long long) syncs.total()));
}

GPTOptions shape(int64_t layers, double dropout, int64_t context)
{
    return GPTOptions(256, context, 32, layers, 2).dropout(dropout);
}

std::vector<at::Tensor> gradients(const GPTOptions &options, const at::Tensor &inputs, c10::Device device)
{
    return testing::oneStepGradients(options, inputs, {}, device);
}

// The recomputation replays the device's own generator, so dropout draws the same masks.
void checkpointEqualsPlain(Checks &checks, c10::Device device)
{
    const at::Tensor inputs = at::randint(0, 256, {4, 32}, at::kLong);
    for (const double dropout : {0.0, 0.2}) {
        const auto plain = gradients(shape(3, dropout, 32), inputs, device);
        const auto checkpointed = gradients(shape(3, dropout, 32).checkpoint_every(1), inputs, device);
        const double worst = largestDifference(plain, checkpointed);
        checks.expect(worst < 1e-6 && plain.front().abs().sum().item<double>() > 0,
                      "checkpoint/equals-plain dropout " + format("%.1f", dropout),
                      format("largest gradient difference %g", worst));
    }
}

// Chunked attention, and on LibTorch 2.x the fused one, against naive: gradients and outputs.
void attentionEqualsNaive(Checks &checks, c10::Device device)
{
    const at::Tensor inputs = at::randint(0, 256, {2, 48}, at::kLong);
    const auto naive = gradients(shape(2, 0.0, 48), inputs, device);
    const auto chunked = gradients(shape(2, 0.0, 48).attention_chunk(20), inputs, device);
    checks.expect(largestDifference(naive, chunked) < 1e-5, "attention/chunked-equals-naive",
                  format("largest gradient difference %g", largestDifference(naive, chunked)));
    if (compat::hasFusedAttention) {
        const auto fused = gradients(shape(2, 0.0, 48).fused_attention(true), inputs, device);
        checks.expect(largestDifference(naive, fused) < 1e-5, "attention/sdpa-equals-naive",
                      format("largest gradient difference %g", largestDifference(naive, fused)));
        return;
    }
    RunConfig config = loadRunConfig("smoke", "", {"memory.attention=sdpa"});
    try {
        runDevice(config);
        checks.expect(false, "attention/sdpa-refused", "sdpa was accepted on LibTorch 1.x");
    } catch (const ConfigError &e) {
        checks.expect(std::strstr(e.what(), "needs LibTorch 2.0") != nullptr, "attention/sdpa-refused", e.what());
    }
}

// Peak bytes over one forward and backward at T=512, measured on the device's own allocator.
void chunkedPeakIsLower(Checks &checks, c10::Device device)
{
    const DeviceMemory memory(device);
    const auto peak = [&](const GPTOptions &options) {
        const at::Tensor inputs = at::randint(0, 256, {2, 512}, at::kLong).to(device);
        GPT model(options);
        model->to(device);
        synchronize(device);
        const int64_t before = memory.currentBytes();
        memory.resetPeak();
        model->loss(inputs, inputs).backward();
        synchronize(device);
        return memory.peakBytes() - before;
    };
    const int64_t naive = peak(GPTOptions(256, 512, 32, 1, 4));
    const int64_t chunked = peak(GPTOptions(256, 512, 32, 1, 4).attention_chunk(64));
    checks.expect(chunked < naive, "memory/chunked-peak-lower-at-T512",
                  format("naive %.2f MiB, chunked %.2f MiB", double(naive) / 1048576.0, double(chunked) / 1048576.0));
}

// The loop's waits for the device: optlog's count (HostSyncs) against what LibTorch itself saw
// (CUDA's sync debug mode), over 24 steps read every step and every 12th, and 48 read every 12th.
// Reading less often must save LibTorch exactly the waits optlog saved, and what LibTorch sees
// beyond optlog's count (waits inside its own kernels) must not grow with the steps.
void syncsAreCounted(Checks &checks, const std::string &deviceName)
{
    if (deviceName != "cuda") {
        checks.expect(cuda::countSynchronisations([] {}) == (cuda::built() ? 0 : -1), "syncs/counted-on-the-gpu",
                      "not a GPU: the loop's count is held by tst_enginerun on the CPU");
        return;
    }
    struct Count
    {
        int64_t ours = 0, seen = 0;
    };
    const auto countOf = [](int steps, int every) {
        const RunConfig config = loadRunConfig("smoke", "",
                                               {"data.corpus=generated", "runtime.device=cuda",
                                                "train.steps=" + std::to_string(steps), "train.eval_interval=24",
                                                "runtime.speed_probe_every=0",
                                                "runtime.metrics_every=" + std::to_string(every)});
        Trainer trainer(config, loadTokens(config.data, config.model.vocabSize, config.model.contextLength), 1234);
        Recording observer;
        TrainingOutcome outcome;
        Count count;
        count.seen = cuda::countSynchronisations([&] { outcome = trainer.run(observer, observer.stop); });
        for (const auto &[purpose, n] : outcome.hostSyncs)
            count.ours += n;
        return count;
    };
    const Count everyStep = countOf(24, 1), every12th = countOf(24, 12), longer = countOf(48, 12);
    const int64_t saved = everyStep.ours - every12th.ours, libtorchSaved = everyStep.seen - every12th.seen;
    const int64_t beyond = every12th.seen - every12th.ours, beyondLonger = longer.seen - longer.ours;
    checks.expect(saved > 0 && libtorchSaved == saved && beyond >= 0 && beyondLonger == beyond,
                  "syncs/counted-on-the-gpu",
                  format("24 steps read every step: optlog %.0f, LibTorch %.0f; ", double(everyStep.ours),
                         double(everyStep.seen))
                      + format("every 12th: optlog %.0f, LibTorch %.0f; ", double(every12th.ours),
                               double(every12th.seen))
                      + format("48 steps every 12th: optlog %.0f, LibTorch %.0f", double(longer.ours),
                               double(longer.seen)));
}

// A CPU-only build names what is missing when asked for CUDA; a CUDA build refuses FP16 on the CPU.
void refusals(Checks &checks, const std::string &deviceName)
{
    if (deviceName == "cuda")
        return; // eachModeTrains already ran the FP16 modes there
    try {
        runDevice(loadRunConfig("smoke", "", {"runtime.device=cuda"}));
        checks.expect(at::globalContext().hasCUDA(), "refusal/cuda-without-a-gpu", "accepted, and CUDA is there");
    } catch (const ConfigError &e) {
        checks.expect(std::strstr(e.what(), "runtime.device = \"cuda\"") != nullptr, "refusal/cuda-without-a-gpu",
                      e.what());
    }
}

} // namespace

int main(int argc, char **argv)
{
    std::string deviceName = "cpu", only;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (std::strcmp(argv[i], "--device") == 0)
            deviceName = argv[i + 1];
        else if (std::strcmp(argv[i], "--only") == 0)
            only = argv[i + 1];
    }
    c10::Device device(c10::DeviceType::CPU);
    try {
        device = runDevice(loadRunConfig("smoke", "", {"runtime.device=" + deviceName}));
    } catch (const std::exception &e) {
        std::fprintf(stderr, "device_checks: %s\n", e.what());
        return 2;
    }
    CountingAllocator::install();
    at::set_num_threads(1);
    std::printf("device_checks on %s, LibTorch %s\n", describeDevice(device).c_str(), TORCH_VERSION);

    Checks checks;
    const std::vector<std::pair<std::string, std::function<void()>>> groups = {
        {"trains", [&] { eachModeTrains(checks, deviceName); }},
        {"scaler", [&] { scalerSkipsAnInf(checks, device); }},
        {"checkpoint", [&] { checkpointEqualsPlain(checks, device); }},
        {"attention", [&] { attentionEqualsNaive(checks, device); }},
        {"memory", [&] { chunkedPeakIsLower(checks, device); }},
        {"refusal", [&] { refusals(checks, deviceName); }},
        {"syncs", [&] { syncsAreCounted(checks, deviceName); }},
    };
    for (const auto &[name, run] : groups) {
        if (!only.empty() && only != name)
            continue;
        try {
            run();
        } catch (const std::exception &e) {
            checks.expect(false, name, std::string("threw: ") + e.what());
        }
    }
    std::printf("%d passed, %d failed\n", checks.passed(), checks.failed());
    return checks.failed() == 0 ? 0 : 1;
}
