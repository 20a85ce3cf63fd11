// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"
#include "core/engine/data/textdata.h"
#include "core/engine/distributed/rankgroup.h"
#include "core/engine/machine/calibration.h"
#include "core/engine/machine/environment.h"
#include "core/engine/run/memoryprobe.h"
#include "core/engine/run/preflight.h"
#include "core/engine/train/trainer.h"
#include "core/recording/studyrecorder.h"
#include "core/store/store.h"

#include <c10/core/Device.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace optlog {

// One `optlog run`, from its config to its outcome in the study: the sequence config -> device ->
// data -> study -> threads -> calibration -> budget -> run -> recorder -> trainer -> outcome, in
// one place, in three calls (four to resume a run). Everything that can refuse the input happens in the constructor,
// before any file is touched; open() takes the study and measures the machine; train() creates
// the run and trains it.
class EngineRun
{
public:
    enum class PreflightCheck { Refuse, Force };
    // Refuses, with ConfigError or DataError, a config whose device, precision, attention or corpus
    // this engine cannot run, or (InputError) a TorchScript module that breaks its contract, which
    // it then probes for its memory (memoryprobe.h); and, unless `preflight` is Force, one predicted not to fit its
    // memory budget or the machine's available memory (checkMemoryFits). Nothing is written.
    // (`preflight` also decides whether open() refuses a run predicted to take over a day.)
    explicit EngineRun(RunConfig config, PreflightCheck preflight = PreflightCheck::Refuse);
    ~EngineRun();

    // Opens (or creates) the study, then sets up what the run is measured with: the counting
    // allocator, the heap, the threads, the machine's matmul peak. Throws StoreError, writing
    // nothing, for a file that is not a usable study; and ConfigError, before any run exists, for
    // one whose least time at that peak is over a day (checkTimeFits), unless forced.
    void open(const std::string &studyPath);

    struct Options
    {
        bool jsonLines = false; // the engine's events on stdout, for the workbench
        bool progress = false;  // a progress line on stderr
    };
    struct Result
    {
        int64_t runId = 0;
        TrainingOutcome outcome;
    };
    // After open(): creates the run with its environment and predicted memory, trains it until it
    // ends or `stopRequested`, and stores how it ended, with the measured memory and dtypes. A study
    // that stops taking rows (a full disk, an I/O error) ends the run as failed with that cause,
    // stored when the study still takes the outcome, and always in the finished event; only a study
    // that cannot take the run's first row throws StoreError.
    Result train(const Options &options, const std::atomic<bool> &stopRequested);

    const RunConfig &config() const { return m_config; }
    // After train(): the run's own model rate (GFLOP/s of one rank) beat the matmul peak it was
    // judged against, so that peak was measured on a busier machine. Measures it again, once,
    // keeps the new one where the machine was quiet, and stores it with the run.
    void remeasurePeak(int64_t runId, double runGflops);
    // The run whose config this one was made from (`optlog run --from`), stored with the run.
    void setOrigin(RunOrigin origin) { m_origin = std::move(origin); }
    // Before train(): continue run `runId` of the study (whose config this is) from `checkpoint`
    // instead of creating a run: its rows after the checkpoint's step are dropped, and its metrics
    // go on at the step after it.
    void resumeFrom(int64_t runId, WeightFile checkpoint);
    // Before train(): this run is rank 0 of a data-parallel run over `ranks` (distributed.ranks of
    // them). train() gives the other ranks the config, trains with them, and stores what each
    // reports: its memory by role beside the prediction for it, its host, environment and step times.
    void trainWithRanks(std::shared_ptr<RankGroup> ranks) { m_ranks = std::move(ranks); }

private:
    // The trainer from construction to outcome: a budget's refusal as oom, the machine running
    // out or any other exception as failed with its cause; a StoreError passes through.
    TrainingOutcome trainOutcome(StudyRecorder &recorder, int64_t runId, const std::atomic<bool> &stopRequested);
    // What the run is stored with as it starts: the machine, its threads and products, the matmul
    // peak, the attention in use and how `predicted` was made.
    nlohmann::json runEnvironment(const MemoryEstimate &predicted) const;
    // Data parallel: the ranks' reports, rank 0's own first, with their memory stored by rank.
    void storeRanks(int64_t runId, const TrainingOutcome &outcome, const nlohmann::json &environment);
    // The memory predicted for `rank` before the run: the memory model's for optlog's GPT, the
    // probes' for a TorchScript module.
    std::vector<MemoryRow> predictedMemory(int64_t rank = 0) const;
    MemoryEstimate prediction(int64_t rank = 0) const;
    // `gflops` reached by this run's products in its compute dtype, on its path.
    ObservedRate observed(double gflops) const;

    RunConfig m_config;
    RunOrigin m_origin;
    int64_t m_resumedRun = 0; // 0: a new run
    WeightFile m_checkpoint;
    c10::Device m_device;
    DeviceTerms m_deviceTerms;   // what the memory model assumes of the device
    AvailableMemory m_available; // at the check, for the hint when the machine runs out
    TokenSplit m_data;
    // ModelSource::TorchScript: the module's parameters and its memory probes.
    std::optional<ProbedMemory> m_probed;
    // optlog's GPT: the memory model's calibration on this device (memoryprobe.h).
    std::optional<DeviceCalibration> m_calibration;
    std::unique_ptr<Store> m_store;
    uint64_t m_studySeed = 0; // seeds the study's fixed validation set
    ThreadSettings m_threads;
    nlohmann::json m_heap;     // what keepTensorMemoryInHeap() set
    nlohmann::json m_products; // what the run's products run on (enginerun.cpp: productsInUse)
    MatmulPeak m_peak;
    PreflightCheck m_check;                   // Force: the pre-flight checks warn and do not refuse
    std::optional<std::string> m_timeWarning; // checkTimeFits', stored with the run as it starts
    std::shared_ptr<RankGroup> m_ranks;
};

} // namespace optlog
