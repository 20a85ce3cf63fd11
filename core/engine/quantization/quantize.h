// SPDX-License-Identifier: MIT
#pragma once

#include <ATen/core/Tensor.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace optlog {

// Post-training weight quantization, simulated: the codes are really packed (two 4-bit codes per
// byte) with their scales and zero points as real tensors, so that every byte of the bill is read
// from a tensor; the matmuls then run on weights dequantized to FP32 (there are no int4 kernels
// here).
enum class QuantScheme {
    Int8,     // one FP16 scale per output channel (row), codes -127..127, symmetric absmax
    Int4,     // one FP16 scale per group of a row, codes -7..7, symmetric absmax
    Int4Asym, // one FP16 scale and one uint8 zero point per group, codes 0..15 over [min, max] (0 included)
    Nf4,      // one FP16 absmax scale per group, codes index the NF4 codebook (normal quantiles)
};

std::optional<QuantScheme> quantSchemeNamed(const std::string &name); // "int8", "int4", "int4-asym", "nf4"
bool isFourBit(QuantScheme scheme);

// NF4's 16 values in [-1, 1], ascending: quantiles of the standard normal (QLoRA, Dettmers et al.
// 2023), computed here from the inverse normal CDF, with an exact 0 and the ends at -1 and 1.
const std::array<float, 16> &nf4Codebook();

// Two 4-bit codes (uint8 values 0..15, an even count) per byte, the first in the low half; and back.
at::Tensor packNibbles(const at::Tensor &codes);
at::Tensor unpackNibbles(const at::Tensor &packed, int64_t count);

// One weight matrix, quantized.
struct QuantizedTensor
{
    QuantScheme scheme = QuantScheme::Int8;
    int64_t groupSize = 0; // weights per scale; for int8 the row length
    std::vector<int64_t> shape;
    at::Tensor codes;      // int8 codes (int8), or packed 4-bit codes (uint8, half as many bytes)
    at::Tensor scales;     // float16, one per group
    at::Tensor zeroPoints; // uint8, one per group (int4-asym); undefined otherwise

    int64_t codeBytes() const;
    int64_t scaleBytes() const;
    int64_t zeroPointBytes() const;
};

// Why `weight` (a 2-D matrix) cannot be quantized with `groupSize` (ignored for int8), or empty:
// a group that is not a power of two, larger than a row or not dividing it.
std::string groupProblem(const at::Tensor &weight, QuantScheme scheme, int64_t groupSize);
// Quantizes a 2-D weight row by row; groupProblem() must be empty.
QuantizedTensor quantizeWeight(const at::Tensor &weight, QuantScheme scheme, int64_t groupSize);
// The FP32 weights the codes stand for. Every element is within half a quantization step of the
// original: half the scale for int8 and int4, half the gap to the neighbouring codebook value for NF4.
at::Tensor dequantize(const QuantizedTensor &quantized);

} // namespace optlog
