// SPDX-License-Identifier: MIT
#include "core/engine/quantization/quantize.h"

#include "core/contract/rowlookup.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

namespace optlog {

namespace {

// FP16 scales, never below what they stand for (so that the largest weight of a group keeps its
// code within range) and never subnormal (where FP16 loses relative precision).
at::Tensor halfScales(const at::Tensor &scales)
{
    const double smallestNormal = std::ldexp(1.0, -14);
    at::Tensor up = (scales.to(at::kFloat) * (1.0 + std::ldexp(1.0, -10))).clamp_min(smallestNormal);
    return up.to(at::kHalf);
}

// The rows of `weight` cut into groups of `groupSize`: (groups, groupSize), FP32.
at::Tensor grouped(const at::Tensor &weight, int64_t groupSize)
{
    return weight.detach().to(at::kFloat).contiguous().view({-1, groupSize});
}

constexpr Named<QuantScheme> kQuantSchemes[] = {{QuantScheme::Int8, "int8"},
                                                {QuantScheme::Int4, "int4"},
                                                {QuantScheme::Int4Asym, "int4-asym"},
                                                {QuantScheme::Nf4, "nf4"}};

} // namespace

std::optional<QuantScheme> quantSchemeNamed(const std::string &name)
{
    return valueNamed(kQuantSchemes, name);
}

bool isFourBit(QuantScheme scheme)
{
    return scheme != QuantScheme::Int8;
}

const std::array<float, 16> &nf4Codebook()
{
    static const std::array<float, 16> codebook = [] {
        // QLoRA's construction: 8 positive and 7 negative normal quantiles, evenly spaced in
        // probability from `offset` towards the median, and an exact zero; then scaled to [-1, 1].
        const double offset = 0.9677083;
        const auto quantile = [](double p) {
            return std::sqrt(2.0) * at::erfinv(at::scalar_tensor(2 * p - 1, at::kDouble)).item<double>();
        };
        std::vector<double> values = {0.0};
        for (int i = 0; i < 8; ++i)
            values.push_back(quantile(offset + (0.5 - offset) * i / 8.0));
        for (int i = 0; i < 7; ++i)
            values.push_back(-quantile(offset + (0.5 - offset) * i / 7.0));
        std::sort(values.begin(), values.end());
        const double largest = values.back();
        std::array<float, 16> out{};
        for (size_t i = 0; i < out.size(); ++i)
            out[i] = float(values[i] / largest);
        return out;
    }();
    return codebook;
}

at::Tensor packNibbles(const at::Tensor &codes)
{
    const at::Tensor flat = codes.to(at::kByte).contiguous().view({-1, 2});
    return flat.select(1, 0).bitwise_or(flat.select(1, 1).bitwise_left_shift(4)).contiguous();
}

at::Tensor unpackNibbles(const at::Tensor &packed, int64_t count)
{
    const at::Tensor low = packed.bitwise_and(15), high = packed.bitwise_right_shift(4);
    return at::stack({low, high}, 1).view({-1}).slice(0, 0, count);
}

int64_t QuantizedTensor::codeBytes() const
{
    return int64_t(codes.nbytes());
}
int64_t QuantizedTensor::scaleBytes() const
{
    return int64_t(scales.nbytes());
}
int64_t QuantizedTensor::zeroPointBytes() const
{
    return zeroPoints.defined() ? int64_t(zeroPoints.nbytes()) : 0;
}

std::string groupProblem(const at::Tensor &weight, QuantScheme scheme, int64_t groupSize)
{
    if (weight.dim() != 2)
        return "is not a matrix (" + std::to_string(weight.dim()) + " dimensions)";
    if (!isFourBit(scheme))
        return {};
    const int64_t row = weight.size(1);
    if (groupSize < 2 || (groupSize & (groupSize - 1)) != 0)
        return "--group " + std::to_string(groupSize) + " is not a power of two (32, 64, 128, ...)";
    if (groupSize > row)
        return "--group " + std::to_string(groupSize) + " is larger than its rows of " + std::to_string(row)
               + " weights";
    if (row % groupSize != 0)
        return "its rows of " + std::to_string(row) + " weights do not divide into groups of "
               + std::to_string(groupSize);
    return {};
}

QuantizedTensor quantizeWeight(const at::Tensor &weight, QuantScheme scheme, int64_t groupSize)
{
    QuantizedTensor q;
    q.scheme = scheme;
    q.groupSize = isFourBit(scheme) ? groupSize : weight.size(1);
    q.shape = weight.sizes().vec();
    const at::Tensor groups = grouped(weight, q.groupSize);
    const at::Tensor absmax = std::get<0>(groups.abs().max(1, true));
    switch (scheme) {
    case QuantScheme::Int8:
    case QuantScheme::Int4: {
        const int levels = scheme == QuantScheme::Int8 ? 127 : 7;
        q.scales = halfScales(absmax / levels);
        const at::Tensor codes = (groups / q.scales.to(at::kFloat)).round().clamp(-levels, levels);
        q.codes = scheme == QuantScheme::Int8 ? codes.to(at::kChar).view(-1) : packNibbles(codes + 8);
        break;
    }
    case QuantScheme::Int4Asym: {
        // The range always holds 0, so that its zero point is a whole code and a zero weight stays zero.
        const at::Tensor low = std::get<0>(groups.min(1, true)).clamp_max(0);
        const at::Tensor high = std::get<0>(groups.max(1, true)).clamp_min(0);
        q.scales = halfScales((high - low) / 15);
        const at::Tensor scale = q.scales.to(at::kFloat);
        const at::Tensor zero = (-low / scale).round().clamp(0, 15);
        q.zeroPoints = zero.to(at::kByte).view(-1);
        q.codes = packNibbles((groups / scale).round().add(zero).clamp(0, 15));
        break;
    }
    case QuantScheme::Nf4: {
        q.scales = halfScales(absmax);
        const auto &book = nf4Codebook();
        std::vector<float> midpoints;
        for (size_t i = 0; i + 1 < book.size(); ++i)
            midpoints.push_back(0.5f * (book[i] + book[i + 1]));
        const at::Tensor boundaries = at::tensor(midpoints);
        q.codes = packNibbles(at::bucketize(groups / q.scales.to(at::kFloat), boundaries));
        break;
    }
    }
    return q;
}

at::Tensor dequantize(const QuantizedTensor &q)
{
    const int64_t count = std::accumulate(q.shape.begin(), q.shape.end(), int64_t(1), std::multiplies<>());
    const at::Tensor scale = q.scales.to(at::kFloat).view({-1, 1});
    at::Tensor values;
    switch (q.scheme) {
    case QuantScheme::Int8: values = q.codes.to(at::kFloat).view({-1, q.groupSize}) * scale; break;
    case QuantScheme::Int4:
        values = (unpackNibbles(q.codes, count).to(at::kFloat) - 8).view({-1, q.groupSize}) * scale;
        break;
    case QuantScheme::Int4Asym:
        values = (unpackNibbles(q.codes, count).to(at::kFloat).view({-1, q.groupSize})
                  - q.zeroPoints.to(at::kFloat).view({-1, 1}))
                 * scale;
        break;
    case QuantScheme::Nf4: {
        const auto &book = nf4Codebook();
        const at::Tensor codebook = at::tensor(std::vector<float>(book.begin(), book.end()));
        values = codebook.index_select(0, unpackNibbles(q.codes, count).to(at::kLong)).view({-1, q.groupSize}) * scale;
        break;
    }
    }
    return values.view(q.shape);
}

} // namespace optlog
