// SPDX-License-Identifier: MIT
// The training data a config names: a text corpus (data.corpus = "text", any bytes) or a nanoGPT
// token folder (data.corpus = "tokens", train.bin and val.bin of uint16 ids). The first byte picks
// which, the context length and the vocabulary or validation share; the rest is the file (for a
// folder, split in two at a point the second byte picks). Either a DataError names what is wrong,
// or every token fits the vocabulary and both splits give batches of the context length.
#include "core/config/config.h"
#include "core/engine/data/textdata.h"
#include "tests/fuzz/fuzzinput.h"

#include <filesystem>

using namespace optlog;

namespace {

void checkSplit(const std::vector<uint16_t> &tokens, int64_t vocab, int64_t context, const char *which)
{
    for (const uint16_t token : tokens)
        if (token >= vocab)
            fuzz::broken(std::string(which) + " holds token " + std::to_string(token) + ", outside the vocabulary");
    if (int64_t(tokens.size()) < context + 1)
        fuzz::broken(std::string(which) + " holds " + std::to_string(tokens.size()) + " tokens, too few for context "
                     + std::to_string(context));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    const uint8_t choice = data[0];
    const int64_t context = 1 + (choice >> 4); // 1 to 16
    const std::string bytes = fuzz::textOf(data + 2, size - 2);
    DataConfig config;
    int64_t vocab = 256;
    std::unique_ptr<fuzz::InputFile> text;
    std::filesystem::path folder;
    if (choice & 1) {
        config.corpus = Corpus::Text;
        config.validationFraction = double((choice >> 1) & 7) / 8.0;
        text = std::make_unique<fuzz::InputFile>(bytes, ".txt");
        config.path = text->path();
    } else {
        config.corpus = Corpus::Tokens;
        vocab = (choice & 2) ? 50304 : 256;
        folder = fuzz::scratchPath("-tokens");
        std::filesystem::create_directories(folder);
        const size_t cut = bytes.size() * data[1] / 255;
        std::ofstream(folder / "train.bin", std::ios::binary) << bytes.substr(0, cut);
        std::ofstream(folder / "val.bin", std::ios::binary) << bytes.substr(cut);
        config.path = folder.string();
    }
    try {
        const TokenSplit split = loadTokens(config, vocab, context);
        checkSplit(split.train, vocab, context, "the train split");
        checkSplit(split.validation, vocab, context, "the validation split");
        BatchSampler(split.train, context, 1).next(2);
        validationBatches(split.validation, context, 3, 2, 1);
    } catch (const DataError &) {
    }
    if (!folder.empty())
        std::filesystem::remove_all(folder);
    return 0;
}
