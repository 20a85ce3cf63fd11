// SPDX-License-Identifier: MIT
#include "core/engine/model/weightfiles.h"

#include "core/contract/format.h"
#include "core/engine/data/textdata.h"

#include <openssl/evp.h>
#include <torch/nn/module.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>

#include <fcntl.h>
#include <unistd.h>

namespace optlog {

namespace {

std::string systemError(const std::string &what, const std::string &path)
{
    return what + " '" + path + "': " + std::strerror(errno);
}

// Flushes a file or folder to the disk; a failure is the caller's to report.
bool syncPath(const std::string &path, int flags)
{
    const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
    if (fd < 0)
        return false;
    const bool ok = ::fsync(fd) == 0;
    ::close(fd);
    return ok;
}

} // namespace

std::string sha256OfFile(const std::string &path)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        throw DataError(systemError("cannot read the weights file", path));
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr);
    std::vector<unsigned char> buffer(1 << 20);
    for (;;) {
        const ssize_t got = ::read(fd, buffer.data(), buffer.size());
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            const std::string message = systemError("cannot read the weights file", path);
            ::close(fd);
            throw DataError(message);
        }
        if (got == 0)
            break;
        EVP_DigestUpdate(context.get(), buffer.data(), size_t(got));
    }
    ::close(fd);
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    EVP_DigestFinal_ex(context.get(), digest, &length);
    static const char *hex = "0123456789abcdef";
    std::string text;
    for (unsigned int i = 0; i < length; ++i) {
        text += hex[digest[i] >> 4];
        text += hex[digest[i] & 15];
    }
    return text;
}

WeightFile writeAtomically(torch::serialize::OutputArchive &archive, const std::string &path)
{
    return writeAtomically([&archive](const std::string &temporary) { archive.save_to(temporary); }, path);
}

WeightFile writeAtomically(const std::function<void(const std::string &)> &write, const std::string &path)
{
    const std::filesystem::path target(path);
    std::error_code error;
    std::filesystem::create_directories(target.parent_path(), error);
    if (error)
        throw DataError("cannot create the weights folder '" + target.parent_path().string() + "': " + error.message());
    const std::string temporary = path + ".part-" + std::to_string(::getpid());
    try {
        write(temporary);
    } catch (const std::exception &e) {
        std::filesystem::remove(temporary, error);
        throw DataError("cannot write the weights file '" + path + "': " + e.what());
    }
    if (!syncPath(temporary, O_RDONLY) || ::rename(temporary.c_str(), path.c_str()) != 0) {
        const std::string message = systemError("cannot write the weights file", path);
        std::filesystem::remove(temporary, error);
        throw DataError(message);
    }
    syncPath(target.parent_path().string(), O_RDONLY | O_DIRECTORY); // the rename itself, on the disk
    WeightFile file;
    file.bytes = int64_t(std::filesystem::file_size(target));
    file.sha256 = sha256OfFile(path);
    return file;
}

void verifyWeightFile(const std::string &path, const WeightFile &recorded)
{
    std::error_code error;
    const auto bytes = std::filesystem::file_size(path, error);
    if (error)
        throw DataError("the weights file '" + path + "' that the study records (" + formatBytes(recorded.bytes)
                        + ", step " + std::to_string(recorded.step) + ") cannot be read: " + error.message());
    if (int64_t(bytes) != recorded.bytes)
        throw DataError("the weights file '" + path + "' is " + std::to_string(bytes) + " bytes, but the study recorded "
                        + std::to_string(recorded.bytes) + ": it is truncated or was replaced");
    const std::string sha = sha256OfFile(path);
    if (sha != recorded.sha256)
        throw DataError("the weights file '" + path + "' has SHA-256 " + sha + ", but the study recorded "
                        + recorded.sha256 + ": it is corrupt or was replaced");
}

void loadVerified(torch::serialize::InputArchive &archive, const std::string &path, const WeightFile &recorded)
{
    verifyWeightFile(path, recorded);
    loadArchive(archive, path);
}

void loadArchive(torch::serialize::InputArchive &archive, const std::string &path)
{
    try {
        archive.load_from(path);
    } catch (const std::exception &e) {
        throw DataError("the weights file '" + path + "' cannot be read by LibTorch: " + e.what());
    }
}

void loadModelWeights(torch::nn::Module &model, torch::serialize::InputArchive &archive, const std::string &path)
{
    std::vector<std::pair<std::string, at::Tensor>> expected;
    for (const auto &item : model.named_parameters())
        expected.emplace_back(item.key(), at::empty(item.value().sizes(), item.value().options()));
    try {
        model.load(archive);
    } catch (const c10::Error &e) {
        throw DataError("the weights file '" + path + "' does not hold this model's tensors ("
                        + e.what_without_backtrace() + ")");
    }
    const auto loaded = model.named_parameters();
    for (const auto &[name, shape] : expected) {
        const at::Tensor *tensor = loaded.find(name);
        if (!tensor || tensor->sizes() != shape.sizes() || tensor->scalar_type() != shape.scalar_type())
            throw DataError("the weights file '" + path + "' holds " + name + " as "
                            + (tensor
                                   ? std::string(c10::toString(tensor->scalar_type())) + " " + c10::str(tensor->sizes())
                                   : std::string("nothing"))
                            + ", but the run's config makes it " + c10::toString(shape.scalar_type()) + " "
                            + c10::str(shape.sizes()) + ": the study's config and its weights do not belong together");
    }
}

} // namespace optlog
