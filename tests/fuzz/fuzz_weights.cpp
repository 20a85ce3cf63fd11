// SPDX-License-Identifier: MIT
// A weights or checkpoint file, as a run being resumed, quantized or checked reads it. LibTorch 1.13's
// archive reader itself crashes (SIGSEGV) on some malformed files (docs/robustness.md has the
// reproducers), so optlog hands it only a file whose size and SHA-256 are those the study recorded
// when optlog wrote it (loadVerified). The first byte picks what the rest is:
//   even: the bytes of a file the study recorded as the FP32 seed (tiny-Float): any other bytes
//         must be refused by loadVerified before LibTorch reads them, never a signal;
//   odd:  tensors for a well-formed archive, which optlog writes (writeAtomically) and reads back
//         into the model: loadModelWeights must refuse any other name, shape or dtype.
// Either a DataError names the file, or every parameter has the model's shape and dtype.
//   OPTLOG_FUZZ_WRITE_SEEDS=DIR fuzz_weights -runs=0   writes the model's own files (FP32, BF16)
#include "core/engine/data/textdata.h"
#include "core/engine/model/weightfiles.h"
#include "tests/fuzz/fuzzinput.h"

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>
#include <torch/utils.h>

#include <sstream>

using namespace optlog;

namespace {

// A model of the GPT's kinds of tensors, small enough for thousands of loads a second: an
// embedding, a linear layer with its bias, and a buffer.
struct TinyModel : torch::nn::Module
{
    TinyModel()
    {
        register_parameter("wte", torch::randn({16, 8}));
        head = register_module("head", torch::nn::Linear(8, 16));
        register_buffer("mask", torch::ones({4, 4}).tril());
    }
    torch::nn::Linear head{nullptr};
};

// The model's own file, as optlog writes it.
torch::serialize::OutputArchive archiveOf(at::ScalarType dtype)
{
    torch::manual_seed(1); // the same bytes every time: the seed file is what the study recorded
    TinyModel model;
    model.to(dtype);
    torch::serialize::OutputArchive archive;
    model.save(archive);
    return archive;
}

// The seeds, with their first byte: the model's own files as raw bytes (FP32, the recorded one, and
// BF16), and the model's tensors described for a well-formed archive.
void writeSeeds(const std::string &folder)
{
    for (const auto dtype : {at::kFloat, at::kBFloat16}) {
        std::ostringstream bytes;
        archiveOf(dtype).save_to(bytes);
        std::ofstream(folder + "/raw-tiny-" + c10::toString(dtype), std::ios::binary) << '\0' << bytes.str();
    }
    // wte float [16, 8], head.weight float [16, 8], head.bias float [16], mask float [4, 4]
    const char tensors[] = {1, 0, 0, 2, 16, 8, 1, 0, 2, 16, 8, 2, 0, 1, 16, 3, 0, 2, 4, 4};
    std::ofstream(folder + "/tensors-tiny-Float", std::ios::binary).write(tensors, sizeof(tensors));
}

// What a study records of the FP32 file it wrote: its size and SHA-256.
WeightFile recordedSeed()
{
    std::ostringstream bytes;
    archiveOf(at::kFloat).save_to(bytes);
    const fuzz::InputFile file(bytes.str(), ".seed.pt");
    WeightFile recorded;
    recorded.bytes = int64_t(bytes.str().size());
    recorded.sha256 = sha256OfFile(file.path());
    return recorded;
}

// Up to four tensors from the bytes: a name (the model's, another, or a few bytes), a dtype, and
// up to three dimensions of 0 to 19 elements.
torch::serialize::OutputArchive archiveFrom(const uint8_t *data, size_t size)
{
    static const char *const names[] = {"wte", "head.weight", "head.bias", "mask", "wpe", ""};
    static const at::ScalarType dtypes[] = {at::kFloat, at::kBFloat16, at::kHalf, at::kDouble, at::kLong, at::kBool};
    torch::serialize::OutputArchive archive;
    size_t at = 0;
    auto next = [&]() -> uint8_t { return at < size ? data[at++] : 0; };
    for (int tensors = 0; tensors < 4 && at < size; ++tensors) {
        std::string name = names[next() % 6];
        if (name.empty())
            for (uint8_t length = next() % 8; length > 0; --length)
                name += char(next());
        const at::ScalarType dtype = dtypes[next() % 6];
        std::vector<int64_t> shape(next() % 4);
        for (int64_t &dimension : shape)
            dimension = next() % 20;
        archive.write(name, torch::zeros(shape, dtype));
    }
    return archive;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    if (const char *folder = std::getenv("OPTLOG_FUZZ_WRITE_SEEDS"))
        writeSeeds(folder);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    static TinyModel model;
    static const WeightFile seed = recordedSeed();
    const bool wellFormed = data[0] & 1;
    std::unique_ptr<fuzz::InputFile> file;
    WeightFile recorded = seed;
    if (wellFormed) {
        file = std::make_unique<fuzz::InputFile>(std::string(), ".pt");
        torch::serialize::OutputArchive archive = archiveFrom(data + 1, size - 1);
        recorded = writeAtomically(archive, file->path());
    } else {
        file = std::make_unique<fuzz::InputFile>(fuzz::textOf(data + 1, size - 1), ".pt");
    }
    try {
        torch::serialize::InputArchive archive;
        loadVerified(archive, file->path(), recorded);
        loadModelWeights(model, archive, file->path());
    } catch (const DataError &) {
        return 0;
    }
    static const TinyModel reference; // the shapes and dtypes every load must leave
    const auto loadedParameters = model.named_parameters();
    for (const auto &item : reference.named_parameters()) {
        const at::Tensor *loaded = loadedParameters.find(item.key());
        if (!loaded || loaded->sizes() != item.value().sizes() || loaded->scalar_type() != item.value().scalar_type())
            fuzz::broken("a weights file was loaded, but " + item.key() + " is not the model's shape and dtype");
    }
    return 0;
}
