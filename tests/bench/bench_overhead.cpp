// SPDX-License-Identifier: MIT
// What optlog's own measuring costs, seen whole: the counting allocator, the study recorder (its
// batched SQLite writes and the instability detector), the JSON lines the workbench reads, and the
// machine-speed index, against the same training with none of them. Each side runs in its own
// process (the allocator is process-wide); a round runs bare, instrumented, instrumented, bare
// (ABBA), and compares the sides' sums. A side's time is the wall time of its steady steps from
// one step's report to the next, so everything the loop does between steps counts, including the
// recorder's work in the previous report and the speed probe, whose own time the step's
// `stepSeconds` leaves out. Prints each round and the median ratio; fails when a side fails.
// Targets: instrumented / bare <= 1.02 at the default preset, <= 1.05 at the smoke preset.
//   build/tests/bench/bench_overhead [ROUNDS] [STEPS] [PRESET]
#include "core/config/config.h"
#include "core/engine/data/textdata.h"
#include "core/engine/machine/device.h"
#include "core/engine/machine/environment.h"
#include "core/engine/memory/countingallocator.h"
#include "core/engine/train/trainer.h"
#include "core/recording/studyrecorder.h"
#include "core/store/store.h"
#include "tests/common/arguments.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

using namespace optlog;

namespace {

// Takes the wall clock at every step's report, then passes the report on (to the recorder, or to
// nobody).
class StepClock : public TrainingObserver
{
public:
    explicit StepClock(TrainingObserver &next)
        : m_next(next)
    { }
    void step(const StepMetrics &m) override
    {
        m_next.step(m);
        reports.push_back(std::chrono::steady_clock::now());
    }
    void validated(const ValidationPoint &p) override { m_next.validated(p); }
    void event(EventKind kind, const std::string &message, int64_t step) override { m_next.event(kind, message, step); }
    void numerics(const std::vector<TensorNumerics> &rows) override { m_next.numerics(rows); }
    std::vector<std::chrono::steady_clock::time_point> reports;

private:
    TrainingObserver &m_next;
};

// One side, in this process. Writes the instrumented side's JSON lines on stdout, as the
// workbench's engine does, and last a line "seconds_per_step S": the mean wall time from the
// report of the last warm-up step to the report of the last step.
int child(bool instrumented, int steps, const std::string &preset)
{
    RunConfig config = loadRunConfig(preset, "",
                                     {"data.corpus=\"generated\"", "train.steps=" + std::to_string(steps),
                                      "train.eval_interval=1000000"});
    if (!instrumented)
        config.runtime.speedProbeEvery = 0;
    keepTensorMemoryInHeap();
    applyThreadSettings(config.runtime);
    if (instrumented)
        CountingAllocator::install();
    const std::string study = std::filesystem::temp_directory_path()
                              / ("bench-overhead-" + std::to_string(getpid()) + ".sqlite");
    Store store(study);
    const int64_t runId = store.createRun("bench", toToml(config));
    StudyRecorder::Options options; // as `optlog run --json-lines` records (core/engine/run/enginerun.cpp)
    options.jsonLines = true;
    options.allocatorBytes = [memory = DeviceMemory(c10::Device(c10::DeviceType::CPU))] {
        return memory.inUseAndPeakBytes();
    };
    options.diagnostics = config.diagnostics;
    StudyRecorder recorder(store, runId, config.train.steps, options);
    TrainingObserver nobody;
    StepClock clock(instrumented ? static_cast<TrainingObserver &>(recorder) : nobody);
    std::atomic<bool> stop{false};
    Trainer trainer(config, loadTokens(config.data, config.model.vocabSize, config.model.contextLength),
                    uint64_t(store.studySeed()));
    const TrainingOutcome outcome = trainer.run(clock, stop);
    if (instrumented)
        recorder.finished(outcome);
    std::filesystem::remove(study);
    const size_t first = size_t(config.memory.warmupSteps) - 1;
    if (outcome.outcome != Outcome::Completed || clock.reports.size() <= first + 1)
        return 1;
    const double seconds = std::chrono::duration<double>(clock.reports.back() - clock.reports[first]).count();
    std::printf("seconds_per_step %.9f\n", seconds / double(clock.reports.size() - 1 - first));
    return 0;
}

// Runs one side and reads its last line; 0 when it failed.
double runChild(const char *self, const char *side, int steps, const std::string &preset)
{
    const std::string command = std::string(self) + " --child " + side + " " + std::to_string(steps) + " " + preset;
    FILE *pipe = popen(command.c_str(), "r");
    if (!pipe)
        return 0;
    double seconds = 0;
    char line[4096];
    while (std::fgets(line, sizeof(line), pipe)) // the JSON lines are read as a workbench reads them
        std::sscanf(line, "seconds_per_step %lf", &seconds);
    return pclose(pipe) == 0 ? seconds : 0;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc >= 5 && std::string(argv[1]) == "--child")
        return child(std::string(argv[2]) == "instrumented", std::atoi(argv[3]), argv[4]);
    // As `optlog run`'s launcher does (app/launcher.cpp): without it two OpenMP threads spin
    // against OpenBLAS's and every step is twice as slow. A value already set is kept.
    setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
    int rounds = 7, steps = 40;
    try {
        if (argc > 1)
            rounds = int(testing::wholeNumberArgument(argv[1], "ROUNDS", 1, 1000));
        if (argc > 2)
            steps = int(testing::wholeNumberArgument(argv[2], "STEPS", 1, 1'000'000));
    } catch (const std::invalid_argument &e) {
        std::fprintf(stderr, "bench_overhead: %s\n", e.what());
        return 2;
    }
    const std::string preset = argc > 3 ? argv[3] : "default";
    std::printf("%-6s %12s %14s %14s %12s %8s\n", "round", "bare s/step", "instrumented", "instrumented", "bare",
                "ratio");
    std::vector<double> ratios;
    for (int r = 1; r <= rounds; ++r) {
        double times[4];
        const char *order[4] = {"bare", "instrumented", "instrumented", "bare"};
        for (int i = 0; i < 4; ++i) {
            times[i] = runChild(argv[0], order[i], steps, preset);
            if (times[i] <= 0) {
                std::fprintf(stderr, "bench_overhead: round %d: the %s run failed\n", r, order[i]);
                return 1;
            }
        }
        ratios.push_back((times[1] + times[2]) / (times[0] + times[3]));
        std::printf("%-6d %12.5f %14.5f %14.5f %12.5f %8.3f\n", r, times[0], times[1], times[2], times[3],
                    ratios.back());
        std::fflush(stdout);
    }
    std::sort(ratios.begin(), ratios.end());
    std::printf("median ratio instrumented / bare: %.3f (min %.3f, max %.3f, %d rounds, %d steps, preset %s; "
                "target <= %.2f)\n",
                ratios[ratios.size() / 2], ratios.front(), ratios.back(), rounds, steps, preset.c_str(),
                preset == "smoke" ? 1.05 : 1.02);
    return 0;
}
