// SPDX-License-Identifier: MIT
// The sizes of the slowest tests' scenarios, in one place, each with why that many: a step, a cut
// or a case more is seconds more of every test run (docs/building.md, "The test loop").
#pragma once

#include <array>

namespace optlog::testing::scenario {

// tst_cli, a run stopped and resumed (resumeContinuesAsIfTheRunHadNotStopped). Checkpoints every
// 50 steps; SIGTERM stops at 70 (a checkpoint is written at the stop) and SIGKILL at 170 (the last
// periodic checkpoint is step 149, so 20 steps train twice). 300 steps leave 130 or more after
// either resume, over which a restored state that differs (AdamW's moments, the dropout generator,
// the schedule's place) shows in losses held to 1e-6; the smoke model takes milliseconds a step.
inline constexpr int kResumeSteps = 300;
inline constexpr int kResumeCheckpointInterval = 50;
inline constexpr int kResumeCancelledAt = 70;
inline constexpr int kResumeKilledAt = 170;

// tst_remote, a followed run whose connection is cut (cutConnectionsLoseNoRowAndRepeatNone): each
// cut is the ssh client killed at whatever the stream was doing (a row half sent, a checkpoint,
// between rows), and the next connection must resume after the last row kept. 20 cuts land at
// different points of the stream; each costs about 3 s (the reconnection's pause and ssh).
inline constexpr int kConnectionCuts = 20;

// tst_remote, a run cancelled on its host after 60 steps and resumed there
// (aRunStoppedOnItsHostIsResumedThereAndFollowedHere): long enough that the cancel, which goes over
// SSH, lands before the end on a fast machine, and that the resumed run is still training when its
// connection is cut; the smoke model takes milliseconds a step.
inline constexpr int kResumedOnHostSteps = 2000;

// tst_hostile: SIGKILL after this many steps (killAtAnyPointKeepsEveryCommittedRow): the first
// step's rows, a few, a validation's (every 7 steps) and a checkpoint's in flight, one run each.
inline constexpr std::array<int, 4> kKilledAfterSteps = {1, 5, 20, 60};
// Seeded random configs through the real binary (fuzzedConfigsNeverCrashOrChangeARefusedStudy):
// half as files, half as --set strings, each at most 4 steps; 30 gave both refusals and runs from
// seed 1130, and the fuzzers (tests/fuzz) try the parsers with many more.
inline constexpr int kFuzzedConfigs = 30;

// tst_slurm: a run cancelled at step 60 and resumed, and a run whose node dies at step 120 and is
// resumed elsewhere. Long enough that the cancel or the kill lands while the run trains on a fast
// machine; their resumptions train the rest, most of the test's time.
inline constexpr int kSlurmCancelledSteps = 3000;
inline constexpr int kSlurmNodeFailureSteps = 1500;

} // namespace optlog::testing::scenario
