// SPDX-License-Identifier: MIT
#include "core/config/config.h"

#include "core/config/presets.h"

#include <toml++/toml.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace optlog {

namespace {

ConfigField integer(std::string section, std::string key, std::string help,
                    std::function<int64_t &(RunConfig &)> get, double minimum, double maximum = 0)
{
    ConfigField f;
    f.section = std::move(section);
    f.key = std::move(key);
    f.help = std::move(help);
    f.ref = [get](RunConfig &c) -> ConfigField::Ref { return &get(c); };
    f.minimum = minimum;
    f.maximum = maximum;
    return f;
}

ConfigField real(std::string section, std::string key, std::string help,
                 std::function<double &(RunConfig &)> get, double minimum, double maximum = 0,
                 bool exclusiveMaximum = false)
{
    ConfigField f;
    f.section = std::move(section);
    f.key = std::move(key);
    f.help = std::move(help);
    f.ref = [get](RunConfig &c) -> ConfigField::Ref { return &get(c); };
    f.minimum = minimum;
    f.maximum = maximum;
    f.exclusiveMaximum = exclusiveMaximum;
    return f;
}

ConfigField text(std::string section, std::string key, std::string help,
                 std::function<std::string &(RunConfig &)> get, std::vector<std::string> choices = {})
{
    ConfigField f;
    f.section = std::move(section);
    f.key = std::move(key);
    f.help = std::move(help);
    f.ref = [get](RunConfig &c) -> ConfigField::Ref { return &get(c); };
    f.choices = std::move(choices);
    return f;
}

ConfigField flag(std::string section, std::string key, std::string help,
                 std::function<bool &(RunConfig &)> get)
{
    ConfigField f;
    f.section = std::move(section);
    f.key = std::move(key);
    f.help = std::move(help);
    f.ref = [get](RunConfig &c) -> ConfigField::Ref { return &get(c); };
    return f;
}

std::string formatNumber(double v)
{
    std::ostringstream out;
    out << v;
    return out.str();
}

std::string describe(const toml::node &node)
{
    std::ostringstream out;
    if (node.is_string())
        out << '"' << node.value<std::string>().value_or("") << '"';
    else if (node.is_table())
        out << "a table";
    else if (node.is_array())
        out << "an array";
    else
        node.visit([&out](const auto &value) { out << value; });
    return out.str();
}

std::string joined(const std::vector<std::string> &items)
{
    std::string out;
    for (const auto &item : items)
        out += (out.empty() ? "" : ", ") + item;
    return out;
}

void checkRange(const ConfigField &field, double value, const std::string &shown)
{
    const bool tooHigh = field.maximum != 0
                         && (field.exclusiveMaximum ? value >= field.maximum : value > field.maximum);
    if (value < field.minimum || tooHigh || std::isnan(value)) {
        std::string allowed = "at least " + formatNumber(field.minimum);
        if (field.maximum != 0)
            allowed = "from " + formatNumber(field.minimum) + (field.exclusiveMaximum ? " to below " : " to ")
                      + formatNumber(field.maximum);
        throw ConfigError(field.path(), "config: " + field.path() + " = " + shown + ": must be " + allowed + " ("
                          + field.help + ")");
    }
}

void assign(const ConfigField &field, RunConfig &config, const toml::node &node)
{
    const std::string shown = describe(node);
    std::visit(
        [&](auto *target) {
            using T = std::remove_pointer_t<decltype(target)>;
            if constexpr (std::is_same_v<T, int64_t>) {
                auto v = node.value_exact<int64_t>();
                if (!v)
                    throw ConfigError(field.path(), "config: " + field.path() + " = " + shown + ": expected an integer");
                checkRange(field, double(*v), shown);
                *target = *v;
            } else if constexpr (std::is_same_v<T, double>) {
                if (!node.is_number())
                    throw ConfigError(field.path(), "config: " + field.path() + " = " + shown + ": expected a number");
                double v = *node.value<double>();
                checkRange(field, v, shown);
                *target = v;
            } else if constexpr (std::is_same_v<T, bool>) {
                auto v = node.value_exact<bool>();
                if (!v)
                    throw ConfigError(field.path(), "config: " + field.path() + " = " + shown + ": expected true or false");
                *target = *v;
            } else {
                auto v = node.value_exact<std::string>();
                if (!v)
                    throw ConfigError(field.path(), "config: " + field.path() + " = " + shown + ": expected a string");
                if (!field.choices.empty()
                    && std::find(field.choices.begin(), field.choices.end(), *v) == field.choices.end())
                    throw ConfigError(field.path(), "config: " + field.path() + " = " + shown + ": must be one of "
                                      + joined(field.choices));
                *target = *v;
            }
        },
        field.ref(config));
}

const ConfigField *findField(const std::string &section, const std::string &key)
{
    for (const auto &field : configFields())
        if (field.section == section && field.key == key)
            return &field;
    return nullptr;
}

std::vector<std::string> keysOf(const std::string &section)
{
    std::vector<std::string> keys;
    for (const auto &field : configFields())
        if (field.section == section)
            keys.push_back(field.key);
    return keys;
}

std::set<std::string> sections()
{
    std::set<std::string> names;
    for (const auto &field : configFields())
        if (!field.section.empty())
            names.insert(field.section);
    return names;
}

void applyTable(RunConfig &config, const toml::table &table, const std::string &origin)
{
    for (const auto &[rawKey, node] : table) {
        const std::string key(rawKey.str());
        if (const ConfigField *field = findField("", key)) {
            assign(*field, config, node);
            continue;
        }
        if (!sections().count(key)) {
            std::vector<std::string> allowed = keysOf("");
            for (const auto &s : sections())
                allowed.push_back("[" + s + "]");
            throw ConfigError("config (" + origin + "): unknown key '" + key + "'; known: " + joined(allowed));
        }
        const toml::table *inner = node.as_table();
        if (!inner)
            throw ConfigError("config (" + origin + "): '" + key + "' must be a table [" + key + "], got "
                              + describe(node));
        for (const auto &[rawInnerKey, innerNode] : *inner) {
            const std::string innerKey(rawInnerKey.str());
            const ConfigField *field = findField(key, innerKey);
            if (!field)
                throw ConfigError("config (" + origin + "): unknown key '" + key + "." + innerKey
                                  + "'; known keys in [" + key + "]: " + joined(keysOf(key)));
            assign(*field, config, innerNode);
        }
    }
}

} // namespace

const std::vector<ConfigField> &configFields()
{
    static const std::vector<ConfigField> fields = {
        text("", "name", "run name shown in tables", [](RunConfig &c) -> std::string & { return c.name; }),

        integer("model", "vocab_size", "tokens in the vocabulary; 256 for byte-level text",
                [](RunConfig &c) -> int64_t & { return c.model.vocabSize; }, 2, 65536),
        integer("model", "context_length", "T, tokens per sequence",
                [](RunConfig &c) -> int64_t & { return c.model.contextLength; }, 1, 65536),
        integer("model", "width", "C, embedding width", [](RunConfig &c) -> int64_t & { return c.model.width; },
                1, 65536),
        integer("model", "layers", "L, transformer blocks", [](RunConfig &c) -> int64_t & { return c.model.layers; },
                1, 1024),
        integer("model", "heads", "H, attention heads; width must be divisible by heads",
                [](RunConfig &c) -> int64_t & { return c.model.heads; }, 1, 1024),
        real("model", "dropout", "probability of dropping an activation",
             [](RunConfig &c) -> double & { return c.model.dropout; }, 0, 1, true),
        flag("model", "tied_head", "the output head shares the token embedding matrix",
             [](RunConfig &c) -> bool & { return c.model.tiedHead; }),

        text("data", "corpus", "fortunes: Debian's fortunes text; generated: built-in text; text: a UTF-8 file; "
                               "tokens: a folder with nanoGPT's train.bin and val.bin",
             [](RunConfig &c) -> std::string & { return c.data.corpus; }, {"fortunes", "generated", "text", "tokens"}),
        text("data", "path", "the text file or token folder for corpus = text or tokens",
             [](RunConfig &c) -> std::string & { return c.data.path; }),
        real("data", "validation_fraction", "share of a text corpus held out for validation",
             [](RunConfig &c) -> double & { return c.data.validationFraction; }, 0.001, 0.5),
        integer("data", "eval_sequences", "sequences in the fixed validation set",
                [](RunConfig &c) -> int64_t & { return c.data.evalSequences; }, 1, 1000000),

        integer("train", "seed", "seeds initialisation, batch order and dropout",
                [](RunConfig &c) -> int64_t & { return c.train.seed; }, 0),
        integer("train", "microbatch", "sequences per forward/backward pass",
                [](RunConfig &c) -> int64_t & { return c.train.microbatch; }, 1, 1 << 20),
        integer("train", "accumulation", "microbatches accumulated per optimizer step",
                [](RunConfig &c) -> int64_t & { return c.train.accumulation; }, 1, 1 << 20),
        integer("train", "steps", "optimizer steps", [](RunConfig &c) -> int64_t & { return c.train.steps; }, 1),
        real("train", "learning_rate", "peak learning rate after warm-up",
             [](RunConfig &c) -> double & { return c.train.learningRate; }, 1e-12, 10),
        real("train", "min_learning_rate", "learning rate at the end of the cosine decay",
             [](RunConfig &c) -> double & { return c.train.minLearningRate; }, 0, 10),
        integer("train", "warmup_steps", "optimizer steps of linear learning-rate warm-up",
                [](RunConfig &c) -> int64_t & { return c.train.warmupSteps; }, 0),
        real("train", "weight_decay", "AdamW decoupled weight decay",
             [](RunConfig &c) -> double & { return c.train.weightDecay; }, 0, 10),
        real("train", "beta1", "AdamW first-moment decay", [](RunConfig &c) -> double & { return c.train.beta1; },
             0, 1, true),
        real("train", "beta2", "AdamW second-moment decay", [](RunConfig &c) -> double & { return c.train.beta2; },
             0, 1, true),
        real("train", "eps", "AdamW denominator epsilon", [](RunConfig &c) -> double & { return c.train.eps; },
             1e-30, 1),
        real("train", "grad_clip", "maximum global gradient norm; 0 turns clipping off",
             [](RunConfig &c) -> double & { return c.train.gradClip; }, 0),
        integer("train", "eval_interval", "optimizer steps between validations",
                [](RunConfig &c) -> int64_t & { return c.train.evalInterval; }, 1),

        text("precision", "mode", "which state has which dtype (the precision table, docs/techniques.md)",
             [](RunConfig &c) -> std::string & { return c.precision.mode; }, precisionModeNames()),

        integer("memory", "warmup_steps", "steps excluded from the peak and from steady-state throughput",
                [](RunConfig &c) -> int64_t & { return c.memory.warmupSteps; }, 1),
        integer("memory", "checkpoint_every", "activation checkpointing: 0 none, 1 every block, k every k-th "
                                              "block; trades recomputation time for saved activations",
                [](RunConfig &c) -> int64_t & { return c.memory.checkpointEvery; }, 0, 1024),
        text("memory", "attention", "naive keeps the T x T attention scores for backward; chunked recomputes "
                                    "them chunk by chunk; sdpa is LibTorch 2.x's fused attention",
             [](RunConfig &c) -> std::string & { return c.memory.attention; }, {"naive", "chunked", "sdpa"}),
        text("memory", "budget", "allocator budget, e.g. 512MiB: a run past it ends as oom; empty = none",
             [](RunConfig &c) -> std::string & { return c.memory.budget; }),
        integer("memory", "attention_chunk", "queries per chunk for chunked attention",
                [](RunConfig &c) -> int64_t & { return c.memory.attentionChunk; }, 1, 65536),

        integer("runtime", "threads", "intra-op threads; 0 = this machine's measured default",
                [](RunConfig &c) -> int64_t & { return c.runtime.threads; }, 0, 1024),
        integer("runtime", "blas_threads", "BLAS threads; 0 = same as runtime.threads",
                [](RunConfig &c) -> int64_t & { return c.runtime.blasThreads; }, 0, 1024),
        integer("runtime", "speed_probe_every",
                "optimizer steps between timings of a fixed reference matmul (the machine-speed index); 0 = never",
                [](RunConfig &c) -> int64_t & { return c.runtime.speedProbeEvery; }, 0, 1000000),
        text("runtime", "device", "where the run trains: cpu, or cuda (needs a CUDA build of LibTorch and a GPU)",
             [](RunConfig &c) -> std::string & { return c.runtime.device; }, {"cpu", "cuda"}),
    };
    return fields;
}

void applyTomlText(RunConfig &config, const std::string &text, const std::string &origin)
{
    toml::table table;
    try {
        table = toml::parse(text, origin);
    } catch (const toml::parse_error &e) {
        std::ostringstream out;
        out << "config (" << origin << "): not valid TOML at line " << e.source().begin.line << ", column "
            << e.source().begin.column << ": " << e.description();
        throw ConfigError(out.str());
    }
    applyTable(config, table, origin);
}

void applyTomlFile(RunConfig &config, const std::string &path)
{
    std::ifstream in(path);
    if (!in)
        throw ConfigError("config: cannot read '" + path + "': no such file or not readable");
    std::stringstream text;
    text << in.rdbuf();
    applyTomlText(config, text.str(), path);
}

void applyOverride(RunConfig &config, const std::string &assignment)
{
    const auto eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0)
        throw ConfigError("--set '" + assignment + "': expected key=value, for example train.steps=100");
    const std::string key = assignment.substr(0, eq);
    const std::string value = assignment.substr(eq + 1);
    const auto dot = key.find('.');
    const std::string section = dot == std::string::npos ? "" : key.substr(0, dot);
    const std::string name = dot == std::string::npos ? key : key.substr(dot + 1);
    const ConfigField *field = findField(section, name);
    if (!field) {
        std::vector<std::string> known;
        for (const auto &f : configFields())
            known.push_back(f.path());
        throw ConfigError("--set " + key + ": unknown key; known: " + joined(known));
    }
    // Read the value as TOML so that numbers and booleans keep their type; a bare word is a string.
    toml::table parsed;
    try {
        parsed = toml::parse("v = " + value);
    } catch (const toml::parse_error &) {
        parsed = toml::table{{"v", value}};
    }
    assign(*field, config, *parsed.get("v"));
}

int64_t parseBytes(const std::string &text, const std::string &what)
{
    static const std::vector<std::pair<std::string, double>> units = {
        {"KiB", 1024.0}, {"MiB", 1024.0 * 1024}, {"GiB", 1024.0 * 1024 * 1024},
        {"KB", 1e3},     {"MB", 1e6},           {"GB", 1e9},                  {"B", 1}, {"", 1}};
    size_t used = 0;
    double number = 0;
    try {
        number = std::stod(text, &used);
    } catch (const std::exception &) {
        used = 0;
    }
    std::string unit = text.substr(used);
    unit.erase(0, unit.find_first_not_of(' '));
    for (const auto &[name, factor] : units)
        if (used > 0 && unit == name && number > 0)
            return int64_t(number * factor);
    throw ConfigError(what, "config: " + what + " = \"" + text
                      + "\": expected a positive size such as 512MiB, 1.5GiB, 300MB or 1000000 (bytes)");
}

const PrecisionMode &precisionModeNamed(const std::string &name)
{
    const PrecisionMode *mode = findPrecisionMode(name);
    if (!mode)
        throw ConfigError("precision.mode", "config: precision.mode = \"" + name + "\": must be one of " + joined(precisionModeNames()));
    return *mode;
}

void requirePrecisionOnDevice(const PrecisionMode &mode, const std::string &device)
{
    if (mode.cudaOnly && device != "cuda")
        throw ConfigError("precision.mode", "config: precision.mode = \"" + mode.name
                          + "\" needs a CUDA device, and runtime.device = \"" + device
                          + "\": LibTorch 1.13 has no FP16 autocast and no FP16 matmul on the CPU. Set "
                            "runtime.device = \"cuda\" on a GPU, or use \"autocast-bf16\" or \"master-bf16\" "
                            "(BF16 has FP32's exponent range and needs no loss scaler).");
}

void validate(const RunConfig &c)
{
    if (!c.memory.budget.empty())
        parseBytes(c.memory.budget, "memory.budget");
    requirePrecisionOnDevice(precisionModeOf(c), c.runtime.device);
    if (!c.memory.budget.empty() && c.runtime.device != "cpu")
        throw ConfigError("memory.budget", "config: memory.budget = \"" + c.memory.budget + "\" with runtime.device = \""
                          + c.runtime.device + "\": the budget rehearses a device's limit on the CPU's allocator; "
                          "on a GPU its own memory is the limit. Leave memory.budget empty, or set runtime.device = \"cpu\"");
    if (c.model.width % c.model.heads != 0)
        throw ConfigError("model.width", "config: model.width = " + std::to_string(c.model.width)
                          + ": must be divisible by model.heads = " + std::to_string(c.model.heads));
    if (c.train.minLearningRate > c.train.learningRate)
        throw ConfigError("train.min_learning_rate", "config: train.min_learning_rate = " + formatNumber(c.train.minLearningRate)
                          + ": must not exceed train.learning_rate = " + formatNumber(c.train.learningRate));
    if (c.memory.warmupSteps >= c.train.steps)
        throw ConfigError("memory.warmup_steps", "config: memory.warmup_steps = " + std::to_string(c.memory.warmupSteps)
                          + ": must be below train.steps = " + std::to_string(c.train.steps)
                          + " so that at least one complete step is measured");
    const bool needsPath = c.data.corpus == "text" || c.data.corpus == "tokens";
    if (needsPath && c.data.path.empty())
        throw ConfigError("data.path", "config: data.path is empty: data.corpus = \"" + c.data.corpus
                          + "\" needs a path (a UTF-8 text file, or a folder with train.bin and val.bin)");
    if (c.data.corpus != "tokens" && c.model.vocabSize < 256)
        throw ConfigError("model.vocab_size", "config: model.vocab_size = " + std::to_string(c.model.vocabSize)
                          + ": byte-level text needs at least 256");
}

std::string toToml(const RunConfig &config)
{
    RunConfig copy = config; // ConfigField::ref takes a mutable config
    std::map<std::string, toml::table> bySection;
    toml::table root;
    for (const auto &field : configFields()) {
        toml::table &target = field.section.empty() ? root : bySection[field.section];
        std::visit([&](auto *value) { target.insert_or_assign(field.key, *value); }, field.ref(copy));
    }
    std::ostringstream out;
    out << root << "\n";
    for (const auto &section : {"model", "data", "train", "precision", "memory", "runtime"})
        out << "\n[" << section << "]\n" << bySection[section] << "\n";
    return out.str();
}

std::string fieldText(const ConfigField &field, const RunConfig &config)
{
    RunConfig copy = config; // ConfigField::ref takes a mutable config
    return std::visit(
        [](auto *value) -> std::string {
            using T = std::decay_t<decltype(*value)>;
            if constexpr (std::is_same_v<T, std::string>)
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
    const bool isString = std::holds_alternative<std::string *>(field.ref(probe));
    if (!isString)
        return field.path() + "=" + text;
    std::string quoted;
    for (char c : text)
        quoted += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
    return field.path() + "=\"" + quoted + "\"";
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

RunConfig loadRunConfig(const std::string &preset, const std::string &file, const std::vector<std::string> &overrides)
{
    RunConfig config;
    if (!preset.empty())
        applyTomlText(config, presetText(preset), "preset " + preset);
    if (!file.empty())
        applyTomlFile(config, file);
    for (const auto &assignment : overrides)
        applyOverride(config, assignment);
    if (config.name.empty())
        config.name = preset.empty() ? "run" : preset;
    validate(config);
    return config;
}

} // namespace optlog
