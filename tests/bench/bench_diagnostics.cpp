// SPDX-License-Identifier: MIT
// What the diagnostics cost a run: the same training with diagnostics.numerics on (every
// numerics_every steps: gradient underflow, vanishing updates, activation range) and off, each
// side in its own process, alternated A B B A, repeated. Measured as the wall time of the whole
// training loop, validation and the recorder's writes included, since the numerics run between
// the step's clock readings and their time is not in the step times. The instability detector
// runs on both sides (it is always on). Prints each pair's times and the median ratio.
// Target: on / off <= 1.05 at every 25 steps.
//   build/tests/bench/bench_diagnostics [ROUNDS] [STEPS] [EVERY] [PRESET]
#include "core/config/config.h"
#include "core/engine/data/textdata.h"
#include "core/engine/machine/environment.h"
#include "core/engine/memory/countingallocator.h"
#include "core/engine/train/trainer.h"
#include "core/recording/studyrecorder.h"
#include "core/store/store.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

using namespace optlog;

namespace {

// One side, in this process: prints the training loop's wall seconds.
int child(bool numerics, int steps, int every, const std::string &preset)
{
    RunConfig config = loadRunConfig(preset, "",
                                     {"data.corpus=\"generated\"", "train.steps=" + std::to_string(steps),
                                      "diagnostics.numerics_every=" + std::to_string(every)});
    config.diagnostics.numerics = numerics;
    keepTensorMemoryInHeap();
    applyThreadSettings(config.runtime);
    CountingAllocator::install();
    const std::string study = std::filesystem::temp_directory_path()
                              / ("bench-diagnostics-" + std::to_string(getpid()) + ".sqlite");
    int status = 0;
    {
        Store store(study);
        const int64_t runId = store.createRun("bench", toToml(config));
        StudyRecorder::Options options; // batched writes, as `optlog run` makes them
        options.diagnostics = config.diagnostics;
        StudyRecorder recorder(store, runId, config.train.steps, options);
        std::atomic<bool> stop{false};
        Trainer trainer(config, loadTokens(config.data, config.model.vocabSize, config.model.contextLength),
                        uint64_t(store.studySeed()));
        const auto start = std::chrono::steady_clock::now();
        const TrainingOutcome outcome = trainer.run(recorder, stop);
        recorder.flush();
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const bool measured = !numerics || !store.numerics(runId).empty();
        if (outcome.outcome != Outcome::Completed || !measured)
            status = 1;
        else
            std::printf("%.6f\n", seconds);
    }
    std::filesystem::remove(study);
    return status;
}

double runChild(const char *self, bool numerics, int steps, int every, const std::string &preset)
{
    const std::string command = std::string(self) + " --child " + (numerics ? "on " : "off ") + std::to_string(steps)
                                + " " + std::to_string(every) + " " + preset;
    FILE *pipe = popen(command.c_str(), "r");
    double seconds = 0;
    if (!pipe || std::fscanf(pipe, "%lf", &seconds) != 1)
        seconds = 0;
    if (pipe && pclose(pipe) != 0)
        seconds = 0;
    return seconds;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc >= 6 && std::string(argv[1]) == "--child")
        return child(std::string(argv[2]) == "on", std::atoi(argv[3]), std::atoi(argv[4]), argv[5]);
    // As `optlog run`'s launcher does when untuned (app/launcher.cpp). A value already set is kept.
    setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
    const int rounds = argc > 1 ? std::atoi(argv[1]) : 3;
    const int steps = argc > 2 ? std::atoi(argv[2]) : 100;
    const int every = argc > 3 ? std::atoi(argv[3]) : 25;
    const std::string preset = argc > 4 ? argv[4] : "default";
    std::printf("%-6s %12s %12s %12s %12s %8s\n", "round", "on s", "off s", "off s", "on s", "ratio");
    std::vector<double> ratios;
    for (int r = 1; r <= rounds; ++r) {
        // A B B A: a drift of the machine's speed within the round cancels.
        const double on1 = runChild(argv[0], true, steps, every, preset);
        const double off1 = runChild(argv[0], false, steps, every, preset);
        const double off2 = runChild(argv[0], false, steps, every, preset);
        const double on2 = runChild(argv[0], true, steps, every, preset);
        if (on1 <= 0 || off1 <= 0 || off2 <= 0 || on2 <= 0) {
            std::fprintf(stderr, "round %d: a child failed\n", r);
            return 1;
        }
        ratios.push_back((on1 + on2) / (off1 + off2));
        std::printf("%-6d %12.3f %12.3f %12.3f %12.3f %8.3f\n", r, on1, off1, off2, on2, ratios.back());
    }
    std::sort(ratios.begin(), ratios.end());
    std::printf("median ratio numerics on / off: %.3f (min %.3f, max %.3f, %d rounds of %d steps, numerics every %d "
                "steps, preset %s; target <= 1.05)\n",
                ratios[ratios.size() / 2], ratios.front(), ratios.back(), rounds, steps, every, preset.c_str());
    return 0;
}
