// SPDX-License-Identifier: MIT
#pragma once

#include "core/contract/measurements.h"

#include <functional>
#include <string>

namespace torch::serialize {
class OutputArchive;
class InputArchive;
} // namespace torch::serialize
namespace torch::nn {
class Module;
} // namespace torch::nn

namespace optlog {

// The SHA-256 of a file's bytes, lower-case hex; throws DataError naming the path when it cannot
// be read.
std::string sha256OfFile(const std::string &path);

// Writes `archive` (LibTorch's own serialization, a zip of tensors) to `path` so that a reader sees
// the old file or the whole new one, never a part: a temporary file beside it, fsync, rename, and
// fsync of the folder, which is created when missing. Returns the file's bytes and SHA-256 (the
// kind, step and study-relative path are the caller's).
WeightFile writeAtomically(torch::serialize::OutputArchive &archive, const std::string &path);
// The same for a file that `write` writes to the temporary path it is given.
WeightFile writeAtomically(const std::function<void(const std::string &)> &write, const std::string &path);

// Checks a weights file against what the study recorded of it: a missing file, another size or
// another SHA-256 (truncated, corrupt, replaced) is a DataError naming the file and what was expected.
void verifyWeightFile(const std::string &path, const WeightFile &recorded);
// The file into `archive`; one LibTorch cannot read is a DataError naming it.
void loadArchive(torch::serialize::InputArchive &archive, const std::string &path);
// verifyWeightFile, then loadArchive.
void loadVerified(torch::serialize::InputArchive &archive, const std::string &path, const WeightFile &recorded);
// The model's parameters and buffers from `archive` (read from `path`), each of the shape and dtype
// the model has: LibTorch's own load would take any shape, and fail only in the forward. Another
// shape, dtype or a missing tensor is a DataError naming it.
void loadModelWeights(torch::nn::Module &model, torch::serialize::InputArchive &archive, const std::string &path);

} // namespace optlog
