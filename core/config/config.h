// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/configerror.h"
#include "core/contract/precisionmodes.h"
#include "core/contract/rowlookup.h"

#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

namespace optlog {

// The fields whose value is one of a few words. Each is parsed into its enum once, when the config
// is read; the rest of optlog compares enums, and the words live only in these tables, in the
// order `optlog config --help` lists them.
enum class ModelSource { Builtin, TorchScript };
enum class Corpus { Fortunes, Generated, Text, Tokens };
enum class Attention { Naive, Chunked, Sdpa, Auto };

inline constexpr Named<ModelSource> kModelSources[] = {{ModelSource::Builtin, "builtin"},
                                                       {ModelSource::TorchScript, "torchscript"}};
inline constexpr Named<Corpus> kCorpora[] = {{Corpus::Fortunes, "fortunes"},
                                             {Corpus::Generated, "generated"},
                                             {Corpus::Text, "text"},
                                             {Corpus::Tokens, "tokens"}};
inline constexpr Named<Attention> kAttentions[] = {{Attention::Naive, "naive"},
                                                   {Attention::Chunked, "chunked"},
                                                   {Attention::Sdpa, "sdpa"},
                                                   {Attention::Auto, "auto"}};

// Each choice's table, found by its type: the config's fields and nameOf are templates over it.
constexpr const auto &choiceTable(ModelSource)
{
    return kModelSources;
}
constexpr const auto &choiceTable(Corpus)
{
    return kCorpora;
}
constexpr const auto &choiceTable(Attention)
{
    return kAttentions;
}

// The word a TOML file and a message use for `value`.
template<typename Choice>
std::string nameOf(Choice value)
{
    return nameIn(choiceTable(value), value);
}

struct ModelConfig
{
    // builtin: optlog's GPT, shaped by the fields below; torchscript: the module at `path`
    // (docs/torchscript.md's contract), whose own shape replaces width, layers, heads, dropout and
    // tied_head; vocab_size is the data's and context_length the sequences it is trained on.
    ModelSource source = ModelSource::Builtin;
    std::string path;
    int64_t vocabSize = 256;     // tokens; 256 = byte-level
    int64_t contextLength = 128; // T, tokens per sequence
    int64_t width = 256;         // C, embedding width
    int64_t layers = 4;          // L, transformer blocks
    int64_t heads = 4;           // H, attention heads; width must be divisible by heads
    double dropout = 0.0;        // probability, on attention, residual and embedding outputs
    bool tiedHead = true;        // output head shares the token embedding matrix
};

// The model fields only optlog's own GPT reads: a TorchScript module's own code is its shape.
inline const std::vector<std::string> &builtinShapeFields()
{
    static const std::vector<std::string> fields = {"model.width", "model.layers", "model.heads", "model.dropout",
                                                    "model.tied_head"};
    return fields;
}

struct DataConfig
{
    Corpus corpus = Corpus::Fortunes; // fortunes | generated | text | tokens
    std::string path;                 // text: a UTF-8 file; tokens: a folder with train.bin and val.bin
    double validationFraction = 0.1;  // share of a text corpus held out for validation (its tail)
    int64_t evalSequences = 32;       // sequences in the fixed validation set
};

struct TrainConfig
{
    int64_t seed = 1;              // initialisation, batch order and dropout
    int64_t microbatch = 8;        // sequences per forward/backward
    int64_t accumulation = 1;      // microbatches per optimizer step
    int64_t steps = 300;           // optimizer steps
    double learningRate = 1e-3;    // peak, after warm-up
    double minLearningRate = 1e-4; // end of the cosine decay
    int64_t warmupSteps = 20;      // linear learning-rate warm-up, optimizer steps
    double weightDecay = 0.1;      // AdamW, decoupled
    double beta1 = 0.9;
    double beta2 = 0.95;
    double eps = 1e-8;
    double gradClip = 1.0;          // max global gradient norm; 0 turns clipping off
    int64_t evalInterval = 50;      // optimizer steps between validations (and always at the end)
    int64_t checkpointInterval = 0; // optimizer steps between checkpoints to resume from; 0: none
};

struct PrecisionConfig
{
    std::string mode = "fp32"; // a row of the precision table (core/contract/precisionmodes.h)
    bool tf32 = false;         // FP32 products on NVIDIA tensor cores in TF32 (CUDA only; off as in PyTorch)
};

struct MemoryConfig
{
    int64_t warmupSteps = 3;                // steps excluded from the peak and from steady-state throughput
    int64_t checkpointEvery = 0;            // activation checkpointing: 0 none, 1 every block, k every k-th block
    Attention attention = Attention::Naive; // naive | chunked | sdpa (LibTorch 2.x) | auto (resolvedAttention())
    int64_t attentionChunk = 64;            // queries per chunk when attention = chunked
    std::string budget;                     // allocator budget to rehearse, e.g. "512MiB"; empty = none
};

struct RuntimeConfig
{
    int64_t threads = 0;          // intra-op threads; 0 = the measured default for this machine
    int64_t blasThreads = 0;      // BLAS threads; 0 = same as threads
    int64_t speedProbeEvery = 25; // optimizer steps between timings of the reference kernel; 0 = never
    std::string device = "cpu";   // cpu | cuda (the first visible GPU; CUDA_VISIBLE_DEVICES picks another)
    std::string gemm = "auto";    // auto | onednn | aten | sgemm | primitive: the path of CPU matrix products
    int64_t metricsEvery = 1;     // optimizer steps between reads of the step metrics from the device
};

// Data-parallel training over ranks (engine processes) on torch.distributed's c10d with Gloo.
struct DistributedConfig
{
    static constexpr int64_t kMaxRanks = 64; // distributed.ranks and --world-size, at most
    int64_t ranks = 1;                       // engine processes that train the run together; each a microbatch per step
    int64_t zeroStage = 0;  // 0 plain data parallel; 1 shards AdamW's moments and master weights; 2 also gradients
    int64_t bucketMib = 25; // gradients are reduced (and ZeRO's weights gathered) in buckets of this size
    int64_t timeout = 60;   // seconds a rank waits for the others before the run fails
};

// What the engine watches beside training: instability, and what 16-bit formats would do.
struct DiagnosticsConfig
{
    double lossSpikeFactor = 1.5;   // a train loss this many times its running median is a spike
    double gradNormSpikeFactor = 5; // likewise for the gradient norm
    int64_t spikeWindow = 25;       // optimizer steps the running medians are taken over
    bool numerics = true;           // measure FP16 underflow, BF16 vanishing updates, activation range
    int64_t numericsEvery = 25;     // optimizer steps between those measurements
};

struct RunConfig
{
    std::string name;  // run name shown in tables; empty = derived from preset and overrides
    std::string group; // the replicates of one run over seeds share it; empty = the run's name
    ModelConfig model;
    DataConfig data;
    TrainConfig train;
    PrecisionConfig precision;
    MemoryConfig memory;
    RuntimeConfig runtime;
    DiagnosticsConfig diagnostics;
    DistributedConfig distributed;

    // Over every rank: what one optimizer step trains on.
    int64_t tokensPerStep() const
    {
        return distributed.ranks * train.microbatch * train.accumulation * model.contextLength;
    }
};

// Applies a TOML table over `config`; unknown keys, wrong types and out-of-range values throw.
void applyTomlText(RunConfig &config, const std::string &text, const std::string &origin);
void applyTomlFile(RunConfig &config, const std::string &path);
// `key=value` with a dotted key; the value is read as TOML (so strings may be bare).
void applyOverride(RunConfig &config, const std::string &assignment);

// "512MiB", "1.5GiB", "300MB", "1000000": bytes. Throws ConfigError naming `what` otherwise.
int64_t parseBytes(const std::string &text, const std::string &what);

// Rules that involve more than one field.
void validate(const RunConfig &config);

// The precision table's row of a mode name; throws ConfigError naming precision.mode and the known
// modes when the table has none.
const PrecisionMode &precisionModeNamed(const std::string &name);
inline const PrecisionMode &precisionModeOf(const RunConfig &config)
{
    return precisionModeNamed(config.precision.mode);
}

// The FP16 modes run on CUDA only (LibTorch 1.13 has no FP16 autocast and no FP16 matmul on the
// CPU): on another device, throws ConfigError with the reason and the BF16 alternative.
void requirePrecisionOnDevice(const PrecisionMode &mode, const std::string &device);

// The attention memory.attention stands for on config's device: "auto" is "sdpa" on CUDA where
// LibTorch has scaled_dot_product_attention (`libtorchHasSdpa`: 2.0 or newer), whose flash or
// memory-efficient kernels keep no T x T matrix, and "naive" elsewhere (the CPU's products are
// optlog's own, which SDPA would bypass). Any other setting is itself.
Attention resolvedAttention(const RunConfig &config, bool libtorchHasSdpa);

// The whole config as TOML, every field written, so a stored run can be re-run exactly.
std::string toToml(const RunConfig &config);

// Builds the config of `optlog run`: defaults, then the preset, then the file, then overrides.
RunConfig loadRunConfig(const std::string &preset, const std::string &file, const std::vector<std::string> &overrides);
// The config of a run made from a stored one (`optlog run --from`): the stored TOML, in a group of
// its own, then overrides. `origin` names the stored run in messages.
RunConfig loadDerivedConfig(const std::string &storedToml, const std::string &origin,
                            const std::vector<std::string> &overrides);

} // namespace optlog
