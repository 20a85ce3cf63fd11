// SPDX-License-Identifier: MIT
#pragma once
// The key names of a study's records wherever optlog writes them as JSON: `optlog export`, the JSON
// report (core/analysis/recordjson_p.h writes both) and, where a field is the same, the event
// stream (engineevents.cpp). Two wire keys are shorter, and stay so because the stream's format 1
// only ever adds keys: a step's learning rate is `lr` there, a validation's loss `val_loss`.

namespace optlog::recordkey {

// A run.
inline constexpr char kId[] = "id";
inline constexpr char kName[] = "name";
inline constexpr char kGroup[] = "group";
inline constexpr char kStatus[] = "status";
inline constexpr char kOutcome[] = "outcome";
inline constexpr char kOutcomeStep[] = "outcome_step";
inline constexpr char kMessage[] = "message";
inline constexpr char kCreatedAt[] = "created_at";
inline constexpr char kFinishedAt[] = "finished_at";
inline constexpr char kNote[] = "note";
inline constexpr char kTags[] = "tags";
inline constexpr char kFormerNames[] = "former_names";
inline constexpr char kArchived[] = "archived";
inline constexpr char kDerivedFrom[] = "derived_from";
inline constexpr char kValidationSeed[] = "validation_seed";
inline constexpr char kConfigToml[] = "config_toml";

// A step's metrics.
inline constexpr char kStep[] = "step";
inline constexpr char kTokens[] = "tokens";
inline constexpr char kTrainLoss[] = "train_loss";
inline constexpr char kLearningRate[] = "learning_rate";
inline constexpr char kGradNorm[] = "grad_norm";
inline constexpr char kStepSeconds[] = "step_seconds";
inline constexpr char kTokensPerSecond[] = "tokens_per_second";
inline constexpr char kCommunicationSeconds[] = "communication_seconds";

// A validation (with kStep and kTokens).
inline constexpr char kLoss[] = "loss";
inline constexpr char kSequences[] = "sequences";
inline constexpr char kSequenceSd[] = "sequence_sd";
inline constexpr char kSamplingError[] = "sampling_error";

// A memory row.
inline constexpr char kRole[] = "role";
inline constexpr char kDtype[] = "dtype";
inline constexpr char kBytes[] = "bytes";
inline constexpr char kSource[] = "source";

// A rank of a data-parallel run (with kOutcome, kMessage, kStepSeconds, kCommunicationSeconds).
inline constexpr char kRank[] = "rank";
inline constexpr char kHost[] = "host";
inline constexpr char kPid[] = "pid";
inline constexpr char kMeasuredSteps[] = "measured_steps";
inline constexpr char kEnvironment[] = "environment";
inline constexpr char kMemory[] = "memory";

} // namespace optlog::recordkey
