// SPDX-License-Identifier: MIT
#include "core/config/configfields.h"

#include "core/config/config_p.h"

#include <algorithm>
#include <type_traits>

namespace optlog {

namespace {

// Where each section of the TOML lives in a RunConfig; top-level keys are in the RunConfig itself.
template<typename Section>
struct SectionOf;
template<>
struct SectionOf<ModelConfig>
{
    static constexpr const char *name = "model";
    static constexpr auto member = &RunConfig::model;
};
template<>
struct SectionOf<DataConfig>
{
    static constexpr const char *name = "data";
    static constexpr auto member = &RunConfig::data;
};
template<>
struct SectionOf<TrainConfig>
{
    static constexpr const char *name = "train";
    static constexpr auto member = &RunConfig::train;
};
template<>
struct SectionOf<PrecisionConfig>
{
    static constexpr const char *name = "precision";
    static constexpr auto member = &RunConfig::precision;
};
template<>
struct SectionOf<MemoryConfig>
{
    static constexpr const char *name = "memory";
    static constexpr auto member = &RunConfig::memory;
};
template<>
struct SectionOf<RuntimeConfig>
{
    static constexpr const char *name = "runtime";
    static constexpr auto member = &RunConfig::runtime;
};
template<>
struct SectionOf<DiagnosticsConfig>
{
    static constexpr const char *name = "diagnostics";
    static constexpr auto member = &RunConfig::diagnostics;
};
template<>
struct SectionOf<DistributedConfig>
{
    static constexpr const char *name = "distributed";
    static constexpr auto member = &RunConfig::distributed;
};

// The numbers a field accepts: from `minimum` to `maximum` inclusive (below it when
// `exclusiveMaximum`); a maximum of 0 means none.
struct Range
{
    double minimum = 0;
    double maximum = 0;
    bool exclusiveMaximum = false;
};

// One row of the field table: `value` is the field's member in its section's struct, which gives
// the section, the type and where to read and write it.
template<typename Section, typename T>
ConfigField field(T Section::*value, std::string key, std::string help, Range range = {},
                  std::vector<std::string> choices = {})
{
    ConfigField f;
    if constexpr (!std::is_same_v<Section, RunConfig>)
        f.section = SectionOf<Section>::name;
    f.key = std::move(key);
    f.help = std::move(help);
    f.ref = [value](RunConfig &c) -> ConfigField::Ref {
        T *target;
        if constexpr (std::is_same_v<Section, RunConfig>)
            target = &(c.*value);
        else
            target = &(c.*SectionOf<Section>::member.*value);
        if constexpr (std::is_enum_v<T>)
            return ChoiceRef(target);
        else
            return target;
    };
    f.minimum = range.minimum;
    f.maximum = range.maximum;
    f.exclusiveMaximum = range.exclusiveMaximum;
    if constexpr (std::is_enum_v<T>)
        for (const auto &choice : choiceTable(T{}))
            f.choices.push_back(choice.name);
    else
        f.choices = std::move(choices);
    return f;
}

// What a field accepts, in words, for the reference table.
std::string allowedText(const ConfigField &field)
{
    RunConfig probe;
    return std::visit(
        [&field](const auto &value) -> std::string {
            using T = std::remove_pointer_t<std::decay_t<decltype(value)>>;
            if constexpr (std::is_same_v<T, bool>)
                return "true, false";
            else if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, ChoiceRef>)
                return field.choices.empty() ? "text" : joined(field.choices);
            else
                return std::string(std::is_same_v<T, int64_t> ? "an integer " : "a number ") + rangeText(field);
        },
        field.ref(probe));
}

} // namespace

std::string rangeText(const ConfigField &field)
{
    if (field.maximum == 0)
        return "at least " + formatNumber(field.minimum);
    return "from " + formatNumber(field.minimum) + (field.exclusiveMaximum ? " to below " : " to ")
           + formatNumber(field.maximum);
}

const std::vector<ConfigField> &configFields()
{
    static const std::vector<ConfigField> fields = {
        field(&RunConfig::name, "name", "run name shown in tables"),
        field(&RunConfig::group, "group", "the replicates of one run over seeds share it; empty = the run's name"),

        field(&ModelConfig::source, "source",
              "builtin: optlog's GPT of the fields below; torchscript: your own module at model.path "
              "(docs/torchscript.md)"),
        field(&ModelConfig::path, "path", "the TorchScript file for source = torchscript (torch.jit.save's)"),
        field(&ModelConfig::vocabSize, "vocab_size", "tokens in the vocabulary; 256 for byte-level text", {2, 65536}),
        field(&ModelConfig::contextLength, "context_length", "T, tokens per sequence", {1, 65536}),
        field(&ModelConfig::width, "width", "C, embedding width", {1, 65536}),
        field(&ModelConfig::layers, "layers", "L, transformer blocks", {1, 1024}),
        field(&ModelConfig::heads, "heads", "H, attention heads; width must be divisible by heads", {1, 1024}),
        field(&ModelConfig::dropout, "dropout", "probability of dropping an activation", {0, 1, true}),
        field(&ModelConfig::tiedHead, "tied_head", "the output head shares the token embedding matrix"),

        field(&DataConfig::corpus, "corpus",
              "fortunes: Debian's fortunes text; generated: built-in text; text: a UTF-8 file; "
              "tokens: a folder with nanoGPT's train.bin and val.bin"),
        field(&DataConfig::path, "path", "the text file or token folder for corpus = text or tokens"),
        field(&DataConfig::validationFraction, "validation_fraction", "share of a text corpus held out for validation",
              {0.001, 0.5}),
        field(&DataConfig::evalSequences, "eval_sequences", "sequences in the fixed validation set", {1, 1000000}),

        field(&TrainConfig::seed, "seed", "seeds initialisation, batch order and dropout", {0}),
        field(&TrainConfig::microbatch, "microbatch", "sequences per forward/backward pass", {1, 1 << 20}),
        field(&TrainConfig::accumulation, "accumulation", "microbatches accumulated per optimizer step", {1, 1 << 20}),
        field(&TrainConfig::steps, "steps", "optimizer steps", {1}),
        field(&TrainConfig::learningRate, "learning_rate", "peak learning rate after warm-up", {1e-12, 10}),
        field(&TrainConfig::minLearningRate, "min_learning_rate", "learning rate at the end of the cosine decay",
              {0, 10}),
        field(&TrainConfig::warmupSteps, "warmup_steps", "optimizer steps of linear learning-rate warm-up", {0}),
        field(&TrainConfig::weightDecay, "weight_decay", "AdamW decoupled weight decay", {0, 10}),
        field(&TrainConfig::beta1, "beta1", "AdamW first-moment decay", {0, 1, true}),
        field(&TrainConfig::beta2, "beta2", "AdamW second-moment decay", {0, 1, true}),
        field(&TrainConfig::eps, "eps", "AdamW denominator epsilon", {1e-30, 1}),
        field(&TrainConfig::gradClip, "grad_clip", "maximum global gradient norm; 0 turns clipping off", {0}),
        field(&TrainConfig::evalInterval, "eval_interval", "optimizer steps between validations", {1}),
        field(&TrainConfig::checkpointInterval, "checkpoint_interval",
              "optimizer steps between checkpoints (weights, optimizer state, loss scaler, random state) that "
              "`optlog run --resume` continues from; 0: none (a cancelled run still writes one at the stop)",
              {0}),

        field(&PrecisionConfig::mode, "mode", "which state has which dtype (the precision table, docs/techniques.md)",
              {}, precisionModeNames()),
        field(&PrecisionConfig::tf32, "tf32",
              "FP32 matrix products in TensorFloat-32 on NVIDIA tensor cores (Ampere and newer): 10-bit mantissa "
              "inputs, FP32 sums; off by default, as in PyTorch; CUDA only"),

        field(&MemoryConfig::warmupSteps, "warmup_steps",
              "steps excluded from the peak and from steady-state throughput", {1}),
        field(&MemoryConfig::checkpointEvery, "checkpoint_every",
              "activation checkpointing: 0 none, 1 every block, k every k-th block; trades recomputation time for "
              "saved activations",
              {0, 1024}),
        field(&MemoryConfig::attention, "attention",
              "naive keeps the T x T attention scores for backward; chunked recomputes them chunk by chunk; sdpa is "
              "LibTorch 2.x's fused attention; auto is sdpa on CUDA with LibTorch 2.x (its flash or memory-efficient "
              "kernel, recorded with the run), naive elsewhere"),
        field(&MemoryConfig::budget, "budget", "allocator budget, e.g. 512MiB: a run past it ends as oom; empty = none"),
        field(&MemoryConfig::attentionChunk, "attention_chunk", "queries per chunk for chunked attention", {1, 65536}),

        field(&RuntimeConfig::threads, "threads", "intra-op threads; 0 = this machine's measured default", {0, 1024}),
        field(&RuntimeConfig::blasThreads, "blas_threads", "BLAS threads; 0 = same as runtime.threads", {0, 1024}),
        field(&RuntimeConfig::speedProbeEvery, "speed_probe_every",
              "optimizer steps between timings of a fixed reference matmul (the machine-speed index; one "
              "before the first step, and none that would take the timings past 1% of the run's time); 0 = never",
              {0, 1000000}),
        field(&RuntimeConfig::device, "device",
              "where the run trains: cpu, or cuda (needs a CUDA build of LibTorch and a GPU)", {}, {"cpu", "cuda"}),
        field(&RuntimeConfig::gemm, "gemm",
              "the path of matrix products on the CPU: aten (LibTorch's own), sgemm (oneDNN's; BF16 widened to "
              "FP32), primitive (oneDNN's matmul primitive), onednn (sgemm for FP32, the primitive for BF16); auto = "
              "the path optlog tune measured fastest for the run's precision here, else onednn where this build "
              "has it",
              {}, {"auto", "onednn", "aten", "sgemm", "primitive"}),
        field(&RuntimeConfig::metricsEvery, "metrics_every",
              "optimizer steps between reads of the step metrics (loss, gradient norm, loss scale) from the device: "
              "on a GPU each read waits for the queued kernels; every step is still recorded, the time of each "
              "is its read's interval over its steps",
              {1, 100000}),

        field(&DiagnosticsConfig::lossSpikeFactor, "loss_spike_factor",
              "a train loss this many times its running median is recorded as a loss spike", {1, 1000}),
        field(&DiagnosticsConfig::gradNormSpikeFactor, "grad_norm_spike_factor",
              "a gradient norm this many times its running median is recorded as a spike", {1, 1000}),
        field(&DiagnosticsConfig::spikeWindow, "spike_window", "optimizer steps the running medians are taken over",
              {3, 100000}),
        field(&DiagnosticsConfig::numerics, "numerics",
              "measure what FP16 and BF16 would do to this run's gradients, updates and activations"),
        field(&DiagnosticsConfig::numericsEvery, "numerics_every",
              "optimizer steps between those measurements (outside the step's time and its peak)", {1, 1000000}),
        field(&DistributedConfig::ranks, "ranks",
              "engine processes training data-parallel, each on its own microbatch: the step's batch is ranks x "
              "microbatch x accumulation sequences",
              {1, DistributedConfig::kMaxRanks}),
        field(&DistributedConfig::zeroStage, "zero_stage",
              "ZeRO: 0 none; 1 shards AdamW's moments (and master weights) over the ranks; 2 also the gradients",
              {0, 2}),
        field(&DistributedConfig::bucketMib, "bucket_mib",
              "MiB of FP32 gradients reduced per collective (ZeRO also gathers weights per bucket)", {1, 4096}),
        field(&DistributedConfig::timeout, "timeout",
              "seconds a rank waits for the others in a collective before the run fails", {1, 86400}),
    };
    return fields;
}

const ConfigField *findConfigField(const std::string &path)
{
    for (const auto &field : configFields())
        if (field.path() == path)
            return &field;
    return nullptr;
}

std::vector<std::string> configSections()
{
    std::vector<std::string> sections;
    for (const auto &field : configFields())
        if (!field.section.empty() && std::find(sections.begin(), sections.end(), field.section) == sections.end())
            sections.push_back(field.section);
    return sections;
}

std::string fieldText(const ConfigField &field, const RunConfig &config)
{
    RunConfig copy = config; // ConfigField::ref takes a mutable config
    return std::visit(
        [](const auto &value) -> std::string {
            using T = std::remove_pointer_t<std::decay_t<decltype(value)>>;
            if constexpr (std::is_same_v<T, ChoiceRef>)
                return value.name();
            else if constexpr (std::is_same_v<T, std::string>)
                return *value;
            else if constexpr (std::is_same_v<T, bool>)
                return *value ? "true" : "false";
            else if constexpr (std::is_same_v<T, int64_t>)
                return std::to_string(*value);
            else
                return formatNumber(*value);
        },
        field.ref(copy));
}

std::string fieldAssignment(const ConfigField &field, const std::string &text)
{
    RunConfig probe;
    const ConfigField::Ref ref = field.ref(probe);
    const bool isString = std::holds_alternative<std::string *>(ref) || std::holds_alternative<ChoiceRef>(ref);
    if (!isString)
        return field.path() + "=" + text;
    std::string quoted;
    for (char c : text)
        quoted += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
    return field.path() + "=\"" + quoted + "\"";
}

std::vector<std::string> overridesFrom(const RunConfig &base,
                                       const std::function<std::optional<std::string>(const ConfigField &)> &textOf)
{
    std::vector<std::string> overrides;
    for (const ConfigField &field : configFields())
        if (const std::optional<std::string> text = textOf(field); text && *text != fieldText(field, base))
            overrides.push_back(fieldAssignment(field, *text));
    return overrides;
}

std::vector<FieldComparison> compareConfigs(const std::vector<RunConfig> &configs)
{
    std::vector<FieldComparison> rows;
    for (const auto &field : configFields()) {
        FieldComparison row;
        row.path = field.path();
        for (const auto &config : configs) {
            row.values.push_back(fieldText(field, config));
            row.differs = row.differs || row.values.back() != row.values.front();
        }
        rows.push_back(std::move(row));
    }
    return rows;
}

std::string configReferenceMarkdown()
{
    const RunConfig defaults;
    std::string out = "| key | default | allowed | meaning |\n|---|---|---|---|\n";
    for (const auto &field : configFields()) {
        const std::string value = fieldText(field, defaults);
        out += "| `" + field.path() + "` | " + (value.empty() ? "(empty)" : "`" + value + "`") + " | "
               + allowedText(field) + " | " + field.help + " |\n";
    }
    return out;
}

} // namespace optlog
