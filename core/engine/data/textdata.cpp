// SPDX-License-Identifier: MIT
#include "core/engine/data/textdata.h"

#include "core/config/config.h"
#include "core/contract/format.h"

#include <ATen/ops/empty.h>
#include <ATen/ops/from_blob.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

namespace optlog {

namespace fs = std::filesystem;

namespace {

std::string readFile(const fs::path &path)
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// The whole of a data file, or a DataError naming it and the system's reason: a file that cannot
// be opened or read must never be taken for empty or all-zero data. POSIX read(), because a
// stream reports a failed read as an ordinary end of file.
std::string readDataFile(const fs::path &path)
{
    std::error_code error;
    if (!fs::is_regular_file(path, error))
        throw DataError("data: '" + path.string() + "' is not a regular file"
                        + (error ? " (" + error.message() + ")" : std::string()));
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        throw DataError("data: cannot open '" + path.string() + "': " + std::strerror(errno));
    std::string bytes;
    char buffer[1 << 16];
    for (;;) {
        const ssize_t n = ::read(fd, buffer, sizeof(buffer));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            const std::string reason = std::strerror(errno);
            ::close(fd);
            throw DataError("data: cannot read '" + path.string() + "' after " + std::to_string(bytes.size())
                            + " bytes: " + reason);
        }
        if (n == 0)
            break;
        bytes.append(buffer, size_t(n));
    }
    ::close(fd);
    return bytes;
}

std::vector<uint16_t> bytesToTokens(const std::string &text)
{
    std::vector<uint16_t> tokens(text.size());
    std::transform(text.begin(), text.end(), tokens.begin(), [](char c) { return uint16_t(uint8_t(c)); });
    return tokens;
}

std::vector<uint16_t> readTokenFile(const fs::path &path, int64_t vocabSize)
{
    if (!fs::exists(path))
        throw DataError("data: token file '" + path.string()
                        + "' does not exist; corpus = \"tokens\" needs train.bin and val.bin in data.path");
    const std::string bytes = readDataFile(path);
    if (bytes.empty())
        throw DataError("data: token file '" + path.string()
                        + "' is empty; expected uint16 token ids as nanoGPT writes them");
    if (bytes.size() % 2 != 0)
        throw DataError("data: token file '" + path.string() + "' has an odd size (" + std::to_string(bytes.size())
                        + " bytes); expected uint16 token ids as nanoGPT writes them");
    std::vector<uint16_t> tokens(bytes.size() / 2);
    std::memcpy(tokens.data(), bytes.data(), bytes.size());
    auto largest = std::max_element(tokens.begin(), tokens.end());
    if (largest != tokens.end() && *largest >= vocabSize)
        throw DataError("data: token file '" + path.string() + "' holds id " + std::to_string(*largest)
                        + " at position " + std::to_string(largest - tokens.begin())
                        + ", not below model.vocab_size = " + std::to_string(vocabSize)
                        + "; set model.vocab_size to at least " + std::to_string(*largest + 1));
    return tokens;
}

void requireLength(const std::vector<uint16_t> &tokens, int64_t contextLength, const std::string &what)
{
    if (int64_t(tokens.size()) < contextLength + 1)
        throw DataError("data: the " + what + " split holds " + std::to_string(tokens.size())
                        + " tokens, fewer than model.context_length + 1 = " + std::to_string(contextLength + 1)
                        + "; use a shorter context or more data");
}

Batch makeBatch(const std::vector<uint16_t> &tokens, const std::vector<int64_t> &offsets, int64_t contextLength)
{
    const int64_t B = int64_t(offsets.size());
    Batch batch{at::empty({B, contextLength}, at::kLong), at::empty({B, contextLength}, at::kLong)};
    int64_t *inputs = batch.inputs.data_ptr<int64_t>();
    int64_t *targets = batch.targets.data_ptr<int64_t>();
    for (int64_t b = 0; b < B; ++b)
        for (int64_t t = 0; t < contextLength; ++t) {
            inputs[b * contextLength + t] = tokens[size_t(offsets[size_t(b)] + t)];
            targets[b * contextLength + t] = tokens[size_t(offsets[size_t(b)] + t + 1)];
        }
    return batch;
}

} // namespace

std::string fortunesText(const std::string &folder)
{
    if (!fs::is_directory(folder))
        return {};
    std::vector<fs::path> files;
    for (const auto &entry : fs::directory_iterator(folder)) {
        // The fortune files have no extension; *.dat are indexes and *.u8 links to the same text.
        if (entry.is_regular_file() && !entry.is_symlink() && !entry.path().has_extension())
            files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    std::string text;
    for (const auto &file : files) {
        std::istringstream lines(readFile(file));
        std::string line;
        while (std::getline(lines, line))
            if (line != "%")
                text += line + '\n';
    }
    return text;
}

std::string generatedText(size_t bytes)
{
    static const std::vector<std::string> subjects = {"the old sailor",     "a quiet student", "my neighbour",
                                                      "the tired engineer", "a small dog",     "the teacher",
                                                      "every programmer",   "the cook",        "a stranger",
                                                      "the mayor",          "our team",        "the child"};
    static const std::vector<std::string> verbs = {"found",    "lost",   "built", "painted", "remembered", "carried",
                                                   "repaired", "forgot", "wrote", "opened",  "measured",   "sold"};
    static const std::vector<std::string> objects = {"a wooden boat",        "the broken clock", "an old letter",
                                                     "the red door",         "a long poem",      "the garden wall",
                                                     "a new compiler",       "the heavy box",    "a bright lamp",
                                                     "the last train ticket"};
    static const std::vector<std::string> endings
        = {"before the rain came", "after a long day",          "in the middle of the night",
           "without a word",       "because nobody else would", "and smiled",
           "on the way home",      "for the first time"};
    std::mt19937_64 generator(20261129);
    auto pick = [&generator](const std::vector<std::string> &words) -> const std::string & {
        return words[generator() % words.size()];
    };
    std::string text;
    text.reserve(bytes + 128);
    while (text.size() < bytes) {
        std::string sentence = pick(subjects) + " " + pick(verbs) + " " + pick(objects) + " " + pick(endings) + ".";
        sentence[0] = char(std::toupper(sentence[0]));
        text += sentence + (generator() % 4 == 0 ? "\n" : " ");
    }
    return text;
}

TokenSplit loadTokens(const DataConfig &config, int64_t vocabSize, int64_t contextLength)
{
    TokenSplit split;
    if (config.corpus == Corpus::Tokens) {
        const fs::path folder(config.path);
        split.train = readTokenFile(folder / "train.bin", vocabSize);
        split.validation = readTokenFile(folder / "val.bin", vocabSize);
        split.description = "uint16 tokens from " + folder.string();
    } else {
        std::string text;
        if (config.corpus == Corpus::Text) {
            if (!fs::is_regular_file(config.path))
                throw DataError("data: text corpus '" + config.path + "' does not exist or is not a file");
            text = readDataFile(config.path);
            // Any bytes train (one token each); the description says when they are not text.
            split.description = isUtf8(text) ? "UTF-8 bytes of " + config.path
                                             : "bytes of " + config.path + ", which is not UTF-8 text";
        } else if (config.corpus == Corpus::Fortunes) {
            text = fortunesText();
            split.description = "Debian fortunes, separators removed";
        }
        if (config.corpus == Corpus::Generated || (config.corpus == Corpus::Fortunes && text.empty())) {
            split.description = config.corpus == Corpus::Generated
                                    ? "built-in generated text"
                                    : "built-in generated text (fortunes are not installed: apt-get install fortunes)";
            text = generatedText();
        }
        if (text.empty())
            throw DataError("data: corpus '" + config.path + "' is empty; give a UTF-8 text file with content");
        const size_t trainBytes = size_t(double(text.size()) * (1.0 - config.validationFraction));
        split.train = bytesToTokens(text.substr(0, trainBytes));
        split.validation = bytesToTokens(text.substr(trainBytes));
        split.description += " (" + std::to_string(text.size()) + " bytes)";
    }
    requireLength(split.train, contextLength, "training");
    requireLength(split.validation, contextLength, "validation");
    return split;
}

BatchSampler::BatchSampler(const std::vector<uint16_t> &tokens, int64_t contextLength, uint64_t seed)
    : m_tokens(tokens)
    , m_contextLength(contextLength)
    , m_generator(seed)
{ }

std::string BatchSampler::state() const
{
    std::ostringstream out;
    out << m_generator;
    return out.str();
}

void BatchSampler::restore(const std::string &state)
{
    std::istringstream in(state);
    in >> m_generator;
    if (!in)
        throw DataError("a checkpoint's batch order cannot be read: it was not written by this optlog");
}

Batch BatchSampler::next(int64_t sequences)
{
    return next(sequences, 0, sequences);
}

Batch BatchSampler::next(int64_t sequences, int64_t first, int64_t count)
{
    // Plain modulo rather than std::uniform_int_distribution, whose output differs between
    // standard libraries: a study's batches must not depend on the compiler.
    const uint64_t starts = uint64_t(m_tokens.size()) - uint64_t(m_contextLength);
    std::vector<int64_t> offsets(static_cast<size_t>(sequences));
    for (auto &o : offsets)
        o = int64_t(m_generator() % starts);
    offsets = std::vector<int64_t>(offsets.begin() + first, offsets.begin() + first + count);
    return makeBatch(m_tokens, offsets, m_contextLength);
}

std::vector<Batch> validationBatches(const std::vector<uint16_t> &tokens, int64_t contextLength, int64_t sequences,
                                     int64_t batchSize, uint64_t studySeed)
{
    BatchSampler sampler(tokens, contextLength, studySeed);
    std::vector<Batch> batches;
    for (int64_t done = 0; done < sequences; done += batchSize)
        batches.push_back(sampler.next(std::min(batchSize, sequences - done)));
    return batches;
}

} // namespace optlog
