// SPDX-License-Identifier: MIT
// A run config's checks beyond each field's own range: sizes, the precision mode on its device,
// names fit for a table, and the fields that must agree with each other.
#include "core/config/config.h"
#include "core/config/config_p.h"
#include "core/contract/format.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace optlog {

int64_t parseBytes(const std::string &text, const std::string &what)
{
    static const std::vector<std::pair<std::string, double>> units = {{"KiB", 1024.0},
                                                                      {"MiB", 1024.0 * 1024},
                                                                      {"GiB", 1024.0 * 1024 * 1024},
                                                                      {"KB", 1e3},
                                                                      {"MB", 1e6},
                                                                      {"GB", 1e9},
                                                                      {"B", 1},
                                                                      {"", 1}};
    size_t used = 0;
    double number = 0;
    try {
        number = std::stod(text, &used);
    } catch (const std::exception &) {
        used = 0;
    }
    std::string unit = text.substr(used);
    unit.erase(0, unit.find_first_not_of(' '));
    const std::string expected = "expected a positive size such as 512MiB, 1.5GiB, 300MB or 1000000 (bytes)";
    for (const auto &[name, factor] : units) {
        if (used == 0 || unit != name || !(number > 0))
            continue;
        // A budget that converts to no bytes, or to none that fit, would silently mean "no budget".
        const double bytes = number * factor;
        if (!std::isfinite(bytes) || bytes >= 9.2e18)
            throw ConfigError(what,
                              "config: " + what + " = \"" + text + "\": not a finite size below 8 EiB; " + expected);
        if (bytes < 1)
            throw ConfigError(what, "config: " + what + " = \"" + text + "\": less than one byte; " + expected);
        return int64_t(bytes);
    }
    throw ConfigError(what, "config: " + what + " = \"" + text + "\": " + expected);
}

const PrecisionMode &precisionModeNamed(const std::string &name)
{
    const PrecisionMode *mode = findPrecisionMode(name);
    if (!mode)
        throw ConfigError("precision.mode",
                          "config: precision.mode = \"" + name + "\": must be one of " + joined(precisionModeNames()));
    return *mode;
}

void requirePrecisionOnDevice(const PrecisionMode &mode, const std::string &device)
{
    if (mode.cudaOnly && device != "cuda")
        throw ConfigError("precision.mode",
                          "config: precision.mode = \"" + mode.name + "\" needs a CUDA device, and runtime.device = \""
                              + device
                              + "\": LibTorch 1.13 has no FP16 autocast and no FP16 matmul on the CPU. Set "
                                "runtime.device = \"cuda\" on a GPU, or use \"autocast-bf16\" or \"master-bf16\" "
                                "(BF16 has FP32's exponent range and needs no loss scaler).");
}

namespace {

// A name is shown in tables, reports and the window's lists: one line, in reading order, of
// bounded length.
void requireDisplayableName(const std::string &field, const std::string &value)
{
    const std::string problem = unprintableCharacter(value);
    if (!problem.empty())
        throw ConfigError(field, "config: " + field + " = \"" + printable(value) + "\": holds " + problem
                                     + "; a name is one line of plain text");
    if (value.size() > kMaxNameBytes)
        throw ConfigError(field, "config: " + field + " is " + std::to_string(value.size()) + " bytes long: at most "
                                     + std::to_string(kMaxNameBytes) + " bytes");
}

// A TorchScript module brings its own shape and ops: what optlog would otherwise build into its
// GPT (attention kernels, the products' library) cannot reach inside it.
void validateModelSource(const RunConfig &c)
{
    if (c.model.source == ModelSource::Builtin) {
        if (!c.model.path.empty())
            throw ConfigError("model.path", "config: model.path = \"" + printable(c.model.path)
                                                + "\" with model.source = \"builtin\": the path names a TorchScript "
                                                  "module; set model.source = \"torchscript\" to train it, or leave "
                                                  "model.path empty");
        return;
    }
    if (c.model.path.empty())
        throw ConfigError("model.path", "config: model.path is empty: model.source = \"torchscript\" needs the file "
                                        "torch.jit.save wrote (docs/torchscript.md)");
    if (c.memory.attention != Attention::Naive)
        throw NotApplicable("memory.attention",
                            "config: memory.attention = \"" + nameOf(c.memory.attention)
                                + "\" with model.source = \"torchscript\": a TorchScript module's attention is its own "
                                  "code, which optlog cannot chunk or fuse; leave memory.attention = \"naive\"");
    if (c.runtime.gemm != "auto" && c.runtime.gemm != "aten")
        throw NotApplicable("runtime.gemm", "config: runtime.gemm = \"" + c.runtime.gemm
                                                + "\" with model.source = \"torchscript\": a TorchScript module's "
                                                  "products are its own LibTorch calls; set runtime.gemm = \"auto\" "
                                                  "or \"aten\"");
}

} // namespace

Attention resolvedAttention(const RunConfig &config, bool libtorchHasSdpa)
{
    if (config.memory.attention != Attention::Auto)
        return config.memory.attention;
    return config.runtime.device == "cuda" && libtorchHasSdpa ? Attention::Sdpa : Attention::Naive;
}

void validate(const RunConfig &c)
{
    requireDisplayableName("name", c.name);
    requireDisplayableName("group", c.group);
    if (!c.memory.budget.empty())
        parseBytes(c.memory.budget, "memory.budget");
    requirePrecisionOnDevice(precisionModeOf(c), c.runtime.device);
    if (!c.memory.budget.empty() && c.runtime.device != "cpu")
        throw ConfigError(
            "memory.budget",
            "config: memory.budget = \"" + c.memory.budget + "\" with runtime.device = \"" + c.runtime.device
                + "\": the budget rehearses a device's limit on the CPU's allocator; "
                  "on a GPU its own memory is the limit. Leave memory.budget empty, or set runtime.device = \"cpu\"");
    if (c.precision.tf32 && c.runtime.device != "cuda")
        throw ConfigError("precision.tf32",
                          "config: precision.tf32 = true with runtime.device = \"" + c.runtime.device
                              + "\": TF32 is a format of NVIDIA tensor cores (Ampere and newer), which the CPU does "
                                "not have; its FP32 products stay FP32. Set precision.tf32 = false, or "
                                "runtime.device = \"cuda\" on such a GPU");
    if (c.model.width % c.model.heads != 0)
        throw ConfigError("model.width", "config: model.width = " + std::to_string(c.model.width)
                                             + ": must be divisible by model.heads = " + std::to_string(c.model.heads));
    if (c.train.minLearningRate > c.train.learningRate)
        throw ConfigError("train.min_learning_rate",
                          "config: train.min_learning_rate = " + formatNumber(c.train.minLearningRate)
                              + ": must not exceed train.learning_rate = " + formatNumber(c.train.learningRate));
    if (c.memory.warmupSteps >= c.train.steps)
        throw ConfigError("memory.warmup_steps", "config: memory.warmup_steps = " + std::to_string(c.memory.warmupSteps)
                                                     + ": must be below train.steps = " + std::to_string(c.train.steps)
                                                     + " so that at least one complete step is measured");
    const bool needsPath = c.data.corpus == Corpus::Text || c.data.corpus == Corpus::Tokens;
    if (needsPath && c.data.path.empty())
        throw ConfigError("data.path",
                          "config: data.path is empty: data.corpus = \"" + nameOf(c.data.corpus)
                              + "\" needs a path (a UTF-8 text file, or a folder with train.bin and val.bin)");
    if (c.distributed.zeroStage > 0 && c.distributed.ranks < 2)
        throw ConfigError("distributed.zero_stage",
                          "config: distributed.zero_stage = " + std::to_string(c.distributed.zeroStage)
                              + " shards over ranks, but distributed.ranks = 1: "
                                "set distributed.ranks to 2 or more, or distributed.zero_stage = 0");
    if (c.distributed.ranks > 1 && c.train.checkpointInterval > 0)
        throw ConfigError("train.checkpoint_interval",
                          "config: train.checkpoint_interval = " + std::to_string(c.train.checkpointInterval)
                              + " with distributed.ranks = " + std::to_string(c.distributed.ranks)
                              + ": a run over several ranks cannot be resumed yet "
                                "(its optimizer state and random streams are spread over the ranks); set it to 0");
    validateModelSource(c);
    if (c.data.corpus != Corpus::Tokens && c.model.vocabSize < 256)
        throw ConfigError("model.vocab_size", "config: model.vocab_size = " + std::to_string(c.model.vocabSize)
                                                  + ": byte-level text needs at least 256");
}

} // namespace optlog
