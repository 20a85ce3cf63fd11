// SPDX-License-Identifier: MIT
// What optlog's own measuring costs: the counting allocator, the per-step metrics with their
// batched SQLite writes, and the machine-speed index, against the same training with none of
// them. Each side runs in its own process (the allocator is process-wide), alternated in short
// slices and repeated; prints each round's median step time and the median ratio.
// Target: instrumented / bare <= 1.02.
//   build/tests/bench/bench_overhead [ROUNDS] [STEPS] [PRESET]
#include "core/config/config.h"
#include "core/engine/countingallocator.h"
#include "core/engine/environment.h"
#include "core/engine/studyrecorder.h"
#include "core/engine/textdata.h"
#include "core/engine/trainer.h"
#include "core/store/store.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

using namespace optlog;

namespace {

// Keeps every step's time and passes the step on (to the recorder, or to nobody).
class StepTimes : public TrainingObserver
{
public:
    explicit StepTimes(TrainingObserver &next) : m_next(next) {}
    void step(const StepMetrics &m) override
    {
        seconds.push_back(m.stepSeconds);
        m_next.step(m);
    }
    void validated(const ValidationPoint &p) override { m_next.validated(p); }
    void event(EventKind kind, const std::string &message, int64_t step) override { m_next.event(kind, message, step); }
    void numerics(const std::vector<TensorNumerics> &rows) override { m_next.numerics(rows); }
    std::vector<double> seconds;

private:
    TrainingObserver &m_next;
};

double median(std::vector<double> values)
{
    std::sort(values.begin(), values.end());
    return values.empty() ? 0 : values[values.size() / 2];
}

// One side, in this process: prints the median step time in seconds after warm-up.
int child(bool instrumented, int steps, const std::string &preset)
{
    RunConfig config = loadRunConfig(preset, "", {"data.corpus=\"generated\"", "train.steps=" + std::to_string(steps),
                                                   "train.eval_interval=1000000"});
    if (!instrumented)
        config.runtime.speedProbeEvery = 0;
    keepTensorMemoryInHeap();
    applyThreadSettings(config.runtime);
    if (instrumented)
        CountingAllocator::install();
    const std::string study = std::filesystem::temp_directory_path() / ("bench-overhead-" + std::to_string(getpid()) + ".sqlite");
    Store store(study);
    const int64_t runId = store.createRun("bench", toToml(config));
    StudyRecorder::Options options; // batched writes, as `optlog run` makes them
    StudyRecorder recorder(store, runId, config.train.steps, options);
    TrainingObserver nobody;
    StepTimes times(instrumented ? static_cast<TrainingObserver &>(recorder) : nobody);
    std::atomic<bool> stop{false};
    Trainer trainer(config, loadTokens(config.data, config.model.vocabSize, config.model.contextLength),
                    uint64_t(store.studySeed()));
    trainer.run(times, stop);
    std::vector<double> steady(times.seconds.begin() + std::min<size_t>(times.seconds.size(), size_t(config.memory.warmupSteps)),
                               times.seconds.end());
    std::printf("%.9f\n", median(steady));
    std::filesystem::remove(study);
    return 0;
}

double runChild(const char *self, const char *side, int steps, const std::string &preset)
{
    const std::string command = std::string(self) + " --child " + side + " " + std::to_string(steps) + " " + preset;
    FILE *pipe = popen(command.c_str(), "r");
    double seconds = 0;
    if (!pipe || std::fscanf(pipe, "%lf", &seconds) != 1)
        seconds = 0;
    if (pipe)
        pclose(pipe);
    return seconds;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc >= 5 && std::string(argv[1]) == "--child")
        return child(std::string(argv[2]) == "instrumented", std::atoi(argv[3]), argv[4]);
    // As `optlog run`'s launcher does (app/launcher.cpp): without it two OpenMP threads spin
    // against OpenBLAS's and every step is twice as slow. A value already set is kept.
    setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
    const int rounds = argc > 1 ? std::atoi(argv[1]) : 5;
    const int steps = argc > 2 ? std::atoi(argv[2]) : 40;
    const std::string preset = argc > 3 ? argv[3] : "default";
    std::printf("%-6s %16s %20s %8s\n", "round", "bare s/step", "instrumented s/step", "ratio");
    std::vector<double> ratios;
    for (int r = 1; r <= rounds; ++r) {
        const double bare = runChild(argv[0], "bare", steps, preset);
        const double instrumented = runChild(argv[0], "instrumented", steps, preset);
        if (bare <= 0 || instrumented <= 0) {
            std::fprintf(stderr, "round %d: a child failed\n", r);
            return 1;
        }
        ratios.push_back(instrumented / bare);
        std::printf("%-6d %16.5f %20.5f %8.3f\n", r, bare, instrumented, ratios.back());
    }
    std::sort(ratios.begin(), ratios.end());
    std::printf("median ratio instrumented / bare: %.3f (min %.3f, max %.3f, %d rounds, %d steps, preset %s; "
                "target <= 1.02)\n",
                ratios[ratios.size() / 2], ratios.front(), ratios.back(), rounds, steps, preset.c_str());
    return 0;
}
