// SPDX-License-Identifier: MIT
#include "core/engine/distributed/dataparallel.h"

#include "core/engine/compat/torchcompat.h"
#include "core/memorymodel/memorymodel.h"
#include "core/memorymodel/modelshape.h"

#include <ATen/ATen.h>
#include <torch/utils.h>

#include <cmath>

namespace optlog {

namespace {

at::Tensor flat(const at::Tensor &tensor)
{
    return tensor.view({-1});
}

std::vector<int64_t> sizesOf(const std::vector<at::Tensor> &tensors)
{
    std::vector<int64_t> sizes;
    for (const auto &t : tensors)
        sizes.push_back(t.numel());
    return sizes;
}

} // namespace

DataParallel::DataParallel(RankGroup &group, const RunConfig &config, const std::vector<at::Tensor> &parameters,
                           bool masterWeights)
    : m_group(group)
    , m_stage(config.distributed.zeroStage)
    , m_masterWeights(masterWeights)
    , m_parameters(parameters)
    , m_layout(shardLayoutOf(config, sizesOf(parameters)))
{
    // The memory model predicts the built-in GPT's shards from its own list of tensor sizes: the
    // model must be that list.
    if (config.model.source == ModelSource::Builtin && sizesOf(parameters) != parameterSizes(config.model))
        throw std::logic_error("DataParallel: the model's parameters are not parameterSizes()'s, which ranks shard by");

    const auto options = parameters.front().options().dtype(at::kFloat).requires_grad(false);
    m_bucket = at::zeros({m_layout.largestBucket()}, options);
    if (m_stage == 0)
        return;
    m_part = at::zeros({m_layout.largestPart()}, options);
    compat::GradDisabledGuard noGrad;
    m_pieces = m_layout.piecesOf(group.rank());
    for (const auto &piece : m_pieces) {
        const at::Tensor view = flat(parameters[size_t(piece.parameter)].detach()).narrow(0, piece.offset, piece.length);
        m_shard.push_back(m_masterWeights ? view.to(at::kFloat).clone() : view);
        m_shardGradients.push_back(m_stage >= 2 ? at::zeros({piece.length}, view.options()) : at::Tensor());
    }
}

std::vector<int64_t> DataParallel::shardParameters() const
{
    std::vector<int64_t> out;
    for (const auto &piece : m_pieces)
        out.push_back(piece.parameter);
    return out;
}

void DataParallel::fillBucket(size_t b)
{
    const auto &bucket = m_layout.buckets[b];
    for (int64_t p = bucket.firstParameter; p < bucket.endParameter; ++p) {
        const at::Tensor &parameter = m_parameters[size_t(p)];
        at::Tensor slot = m_bucket.narrow(0, m_layout.bucketOffsets[size_t(p)], parameter.numel());
        if (parameter.grad().defined())
            slot.copy_(flat(parameter.grad()));
        else
            slot.zero_(); // a parameter the loss did not reach
    }
    m_bucket.narrow(0, bucket.elements, m_bucket.numel() - bucket.elements).zero_();
}

void DataParallel::reduceGradients()
{
    compat::GradDisabledGuard noGrad;
    const double share = 1.0 / double(m_group.size());
    for (size_t b = 0; b < m_layout.buckets.size(); ++b) {
        const auto &bucket = m_layout.buckets[b];
        fillBucket(b);
        if (m_stage == 0) {
            at::Tensor used = m_bucket.narrow(0, 0, bucket.elements);
            m_group.allreduceSum(used);
            used.mul_(share);
            for (int64_t p = bucket.firstParameter; p < bucket.endParameter; ++p) {
                at::Tensor &parameter = m_parameters[size_t(p)];
                const at::Tensor mean = used.narrow(0, m_layout.bucketOffsets[size_t(p)], parameter.numel());
                if (parameter.grad().defined())
                    flat(parameter.grad()).copy_(mean);
            }
            continue;
        }
        const int64_t part = m_layout.partElements(int64_t(b));
        for (int64_t owner = 0; owner < m_group.size(); ++owner) {
            at::Tensor ownerPart = m_bucket.narrow(0, owner * part, part);
            m_group.reduceSumTo(owner, ownerPart);
        }
        for (size_t i = 0; i < m_pieces.size(); ++i) {
            const auto &piece = m_pieces[i];
            if (piece.bucket != int64_t(b))
                continue;
            const at::Tensor mean = m_bucket.narrow(0, piece.bucketOffset, piece.length).mul_(share);
            if (m_stage == 1) // the parameter's own gradient holds the shard's
                m_shardGradients[i] = flat(m_parameters[size_t(piece.parameter)].grad())
                                          .narrow(0, piece.offset, piece.length);
            m_shardGradients[i].copy_(mean);
        }
    }
    if (m_stage >= 2)
        for (auto &parameter : m_parameters)
            parameter.mutable_grad() = at::Tensor();
    for (size_t i = 0; i < m_shard.size(); ++i)
        m_shard[i].mutable_grad() = m_masterWeights ? m_shardGradients[i].to(at::kFloat) : m_shardGradients[i];
}

std::optional<double> DataParallel::unscaleAndClip(const std::vector<at::Tensor> &optimized, const LossScaler *scaler,
                                                   double maxNorm)
{
    compat::GradDisabledGuard noGrad;
    const bool finite = !scaler || scaler->unscale(optimized);
    // The squared norm of each rank's part, summed piece by piece in the layout's order: without
    // ZeRO every rank holds all of them and adds the parts in rank order, as the all-reduce of
    // ZeRO's parts does, so that both clip by the same norm.
    const auto partSquares = [&](int64_t rank, const auto &gradientOf) {
        std::vector<at::Tensor> norms;
        const auto pieces = m_stage == 0 ? m_layout.piecesOf(rank) : m_pieces;
        for (size_t i = 0; i < pieces.size(); ++i)
            norms.push_back(gradientOf(i, pieces[i]).norm());
        if (norms.empty())
            return 0.0;
        const at::Tensor values = at::stack(norms).to(at::kDouble).cpu().contiguous();
        double squares = 0;
        for (int64_t i = 0; i < values.numel(); ++i)
            squares += values.data_ptr<double>()[i] * values.data_ptr<double>()[i];
        return squares;
    };
    double squares = 0;
    bool anyNonFinite = !finite;
    if (m_stage == 0) {
        for (int64_t rank = 0; rank < m_group.size(); ++rank)
            squares += partSquares(rank, [&](size_t, const ShardLayout::Piece &piece) {
                return flat(optimized[size_t(piece.parameter)].grad()).narrow(0, piece.offset, piece.length);
            });
    } else {
        const double own = partSquares(m_group.rank(),
                                       [&](size_t i, const ShardLayout::Piece &) { return optimized[i].grad(); });
        at::Tensor agreed = at::tensor(std::vector<double>{own, finite ? 0.0 : 1.0}, at::kDouble).to(m_bucket.device());
        m_group.allreduceSum(agreed);
        squares = agreed[0].item<double>();
        anyNonFinite = agreed[1].item<double>() > 0;
    }
    const double norm = std::sqrt(squares);
    if (anyNonFinite || !std::isfinite(norm))
        return std::nullopt;
    const double coefficient = std::min(1.0, (maxNorm > 0 ? maxNorm : INFINITY) / (norm + 1e-6));
    if (coefficient < 1.0)
        for (const auto &tensor : optimized)
            tensor.grad().mul_(coefficient);
    return norm;
}

void DataParallel::gatherParameters()
{
    compat::GradDisabledGuard noGrad;
    for (size_t b = 0; b < m_layout.buckets.size(); ++b) {
        const auto &bucket = m_layout.buckets[b];
        const int64_t part = m_layout.partElements(int64_t(b));
        at::Tensor send = m_part.narrow(0, 0, part);
        send.zero_();
        for (size_t i = 0; i < m_pieces.size(); ++i)
            if (m_pieces[i].bucket == int64_t(b))
                send.narrow(0, m_pieces[i].bucketOffset - m_group.rank() * part, m_pieces[i].length).copy_(m_shard[i]);
        std::vector<at::Tensor> parts;
        for (int64_t r = 0; r < m_group.size(); ++r)
            parts.push_back(m_bucket.narrow(0, r * part, part));
        m_group.allgather(parts, send);
        for (int64_t p = bucket.firstParameter; p < bucket.endParameter; ++p) {
            at::Tensor &parameter = m_parameters[size_t(p)];
            flat(parameter.detach()).copy_(m_bucket.narrow(0, m_layout.bucketOffsets[size_t(p)], parameter.numel()));
        }
    }
}

void DataParallel::releaseShardGradients()
{
    if (m_masterWeights)
        for (auto &piece : m_shard)
            piece.mutable_grad() = at::Tensor();
}

std::pair<double, bool> DataParallel::agree(double value, bool stopRequested)
{
    // On the buckets' device: NCCL reduces device tensors only.
    at::Tensor both = at::tensor(std::vector<double>{value, stopRequested ? 1.0 : 0.0}, at::kDouble)
                          .to(m_bucket.device());
    m_group.allreduceSum(both);
    return {both[0].item<double>() / double(m_group.size()), both[1].item<double>() > 0};
}

std::vector<at::Tensor> DataParallel::keptGradients() const
{
    if (m_stage >= 2)
        return m_shardGradients;
    std::vector<at::Tensor> out;
    for (const auto &p : m_parameters)
        out.push_back(p.grad());
    return out;
}

} // namespace optlog
