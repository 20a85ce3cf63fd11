// SPDX-License-Identifier: MIT
#include "core/engine/model/gpt.h"

#include "core/config/config.h"
#include "core/engine/compat/torchcompat.h"
#include "core/engine/machine/environment.h"
#include "core/engine/machine/steptimeline.h"
#include "core/engine/model/recompute.h"
#include "core/engine/model/weightfiles.h"
#include "core/engine/precision/precision.h"

#include <ATen/ops/linear.h>
#include <torch/nn/functional/activation.h>
#include <torch/nn/init.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>
#include <torch/utils.h>

#include <cmath>

namespace optlog {

namespace {

// A linear layer as one product with its bias folded in. LibTorch 1.13's nn::Linear on a 3-D
// input runs a matmul, then adds the bias in place as a second op: an extra pass over the output,
// and under autocast an FP32 copy of the 16-bit output (4 MiB for the default preset's MLP) made
// to add the FP32 bias. at::linear (and oneDNN's path in gemmLinear) fold the bias into the
// product, and autocast casts it too.
torch::Tensor linear(const torch::nn::Linear &layer, const torch::Tensor &x, ProductPaths paths)
{
    return gemmLinear(x, layer->weight, layer->bias, paths);
}

} // namespace

GPTOptions GPTOptions::from(const ModelConfig &model)
{
    return GPTOptions(model.vocabSize, model.contextLength, model.width, model.layers, model.heads)
        .dropout(model.dropout)
        .tied_head(model.tiedHead);
}

GPTOptions GPTOptions::from(const RunConfig &config)
{
    const Attention attention = resolvedAttention(config, compat::hasFusedAttention);
    return from(config.model)
        .checkpoint_every(config.memory.checkpointEvery)
        .attention_chunk(attention == Attention::Chunked ? config.memory.attentionChunk : 0)
        .fused_attention(attention == Attention::Sdpa)
        .gemm(runProductPaths(config.runtime, scalarType(precisionModeOf(config).compute)));
}

std::string attentionInUse(const RunConfig &config, c10::Device device, c10::ScalarType dtype)
{
    const Attention attention = resolvedAttention(config, compat::hasFusedAttention);
    if (attention != Attention::Sdpa)
        return nameOf(attention);
    const auto &m = config.model;
    // One sequence of the run's shape: the choice depends on dtype, head size, length and dropout.
    const at::Tensor q = at::zeros({1, m.heads, m.contextLength, m.width / m.heads},
                                   at::TensorOptions().dtype(dtype).device(device));
    return "sdpa (" + compat::fusedAttentionKernel(q, q, q, m.dropout) + ")";
}

CausalSelfAttentionImpl::CausalSelfAttentionImpl(const GPTOptions &o)
    : m_heads(o.heads())
    , m_chunk(o.attention_chunk())
    , m_gemm(o.gemm())
    , m_fused(o.fused_attention())
    , m_dropout(o.dropout())
{
    m_qkv = register_module("qkv", torch::nn::Linear(o.width(), 3 * o.width()));
    m_proj = register_module("proj", torch::nn::Linear(o.width(), o.width()));
    m_attentionDropout = register_module("attention_dropout", torch::nn::Dropout(o.dropout()));
    m_residualDropout = register_module("residual_dropout", torch::nn::Dropout(o.dropout()));
}

torch::Tensor CausalSelfAttentionImpl::attend(const torch::Tensor &q, const torch::Tensor &k, const torch::Tensor &v,
                                              int64_t offset)
{
    const int64_t c = q.size(2), n = k.size(2);
    auto scores = gemmMatmul(q, k.transpose(-2, -1), m_gemm, 1.0 / std::sqrt(double(q.size(3)))); // (B, H, c, n)
    // Query offset + r sees keys 0 .. offset + r: -inf added above that diagonal, 0 elsewhere, in
    // place. An added mask leaves backward nothing to do (softmax's gradient is already zero where
    // its output is), where masked_fill's backward fills a copy of the gradient, and its forward one
    // of the scores.
    scores.add_(torch::full({c, n}, -INFINITY, scores.options()).triu_(offset + 1));
    auto weights = torch::softmax(scores, -1);
    return gemmMatmul(m_attentionDropout(weights), v, m_gemm); // (B, H, c, D)
}

torch::Tensor CausalSelfAttentionImpl::forward(const torch::Tensor &x)
{
    const int64_t B = x.size(0), T = x.size(1), C = x.size(2), D = C / m_heads;
    // (B, T, 3C) -> three (B, H, T, D) views of the projection, split by unbind: its backward
    // stacks the three gradients straight into the projection's layout, where indexing a permuted
    // view would zero-fill three tensors of the projection's size, add them and copy the sum back
    // out of the permuted order (the largest item of `bench_profile default fp32 30 ops` before).
    const std::vector<torch::Tensor> parts = linear(m_qkv, x, m_gemm).view({B, T, 3, m_heads, D}).unbind(2);
    const torch::Tensor q = parts[0].transpose(1, 2), k = parts[1].transpose(1, 2), v = parts[2].transpose(1, 2);
    torch::Tensor y;
    if (m_fused) {
        y = compat::fusedCausalAttention(q, k, v, is_training() ? m_dropout : 0.0);
    } else if (m_chunk <= 0 || m_chunk >= T) {
        y = attend(q, k, v, 0);
    } else {
        std::vector<torch::Tensor> chunks;
        for (int64_t start = 0; start < T; start += m_chunk) {
            const int64_t end = std::min(T, start + m_chunk);
            // Keys beyond `end` are in the future of every query in the chunk: leave them out.
            chunks.push_back(
                checkpointed([this, start](
                                 const std::vector<torch::Tensor> &in) { return attend(in[0], in[1], in[2], start); },
                             {q.slice(2, start, end), k.slice(2, 0, end), v.slice(2, 0, end)}));
        }
        y = torch::cat(chunks, 2);
    }
    y = y.transpose(1, 2).reshape({B, T, C});
    return m_residualDropout(linear(m_proj, y, m_gemm));
}

MlpImpl::MlpImpl(const GPTOptions &o)
    : m_gemm(o.gemm())
{
    m_fc = register_module("fc", torch::nn::Linear(o.width(), 4 * o.width()));
    m_proj = register_module("proj", torch::nn::Linear(4 * o.width(), o.width()));
    m_dropout = register_module("dropout", torch::nn::Dropout(o.dropout()));
}

torch::Tensor MlpImpl::forward(const torch::Tensor &x)
{
    return m_dropout(linear(m_proj, torch::gelu(linear(m_fc, x, m_gemm)), m_gemm));
}

BlockImpl::BlockImpl(const GPTOptions &o)
{
    m_ln1 = register_module("ln1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.width()})));
    m_attention = register_module("attention", CausalSelfAttention(o));
    m_ln2 = register_module("ln2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.width()})));
    m_mlp = register_module("mlp", Mlp(o));
}

torch::Tensor BlockImpl::forward(const torch::Tensor &x)
{
    auto h = x + m_attention(m_ln1(x));
    return h + m_mlp(m_ln2(h));
}

GPTImpl::GPTImpl(const GPTOptions &o)
    : m_options(o)
{
    m_tokenEmbedding = register_module("token_embedding", torch::nn::Embedding(o.vocab_size(), o.width()));
    m_positionEmbedding = register_module("position_embedding", torch::nn::Embedding(o.context_length(), o.width()));
    m_dropout = register_module("dropout", torch::nn::Dropout(o.dropout()));
    m_blocks = register_module("blocks", torch::nn::ModuleList());
    for (int64_t i = 0; i < o.layers(); ++i)
        m_blocks->push_back(Block(o));
    m_finalNorm = register_module("final_norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.width()})));
    if (!o.tied_head())
        m_head = register_module("head",
                                 torch::nn::Linear(torch::nn::LinearOptions(o.width(), o.vocab_size()).bias(false)));
    initialiseWeights();
}

void GPTImpl::initialiseWeights()
{
    // GPT-2's scheme: N(0, 0.02) for weights, zero biases, and the residual projections scaled
    // by 1/sqrt(2L) so that the residual stream's variance does not grow with depth.
    compat::GradDisabledGuard noGrad;
    const double residualStd = 0.02 / std::sqrt(2.0 * double(m_options.layers()));
    for (const auto &item : named_parameters()) {
        const std::string &name = item.key();
        torch::Tensor p = item.value();
        const bool isNorm = name.find("ln") != std::string::npos || name.find("final_norm") != std::string::npos;
        if (isNorm)
            continue; // LayerNorm keeps weight 1, bias 0
        if (name.size() >= 4 && name.compare(name.size() - 4, 4, "bias") == 0)
            p.zero_();
        else if (name.find("proj.weight") != std::string::npos)
            p.normal_(0.0, residualStd);
        else
            p.normal_(0.0, 0.02);
    }
}

torch::Tensor GPTImpl::embed(const torch::Tensor &tokens)
{
    const int64_t T = tokens.size(1);
    TORCH_CHECK(T <= m_options.context_length(), "sequence of ", T,
                " tokens is longer than model.context_length = ", m_options.context_length());
    auto positions = torch::arange(T, tokens.options());
    return m_dropout(m_tokenEmbedding(tokens) + m_positionEmbedding(positions));
}

torch::Tensor GPTImpl::logits(const torch::Tensor &residualStream)
{
    const torch::Tensor &headWeight = m_options.tied_head() ? m_tokenEmbedding->weight : m_head->weight;
    return gemmLinear(m_finalNorm(residualStream), headWeight, {}, m_options.gemm()); // (B, T, V)
}

torch::Tensor GPTImpl::forward(const torch::Tensor &tokens)
{
    // The phases of a memory timeline, when one records (steptimeline.h): each block's forward, and
    // its backward from where the gradient reaches its output; the head belongs to the loss.
    auto x = markBlockBackward(embed(tokens), TimelinePhase::kNoBlock);
    const int64_t every = m_options.checkpoint_every();
    for (size_t i = 0; i < m_blocks->size(); ++i) {
        enterPhase(StepPart::Forward, int64_t(i));
        auto block = m_blocks[i]->as<Block>();
        if (every > 0 && int64_t(i) % every == 0)
            x = checkpointed([block](const std::vector<torch::Tensor> &in) { return block->forward(in[0]); }, {x});
        else
            x = block->forward(x);
        x = markBlockBackward(x, int64_t(i));
    }
    enterPhase(StepPart::Loss);
    return logits(x);
}

std::vector<double> GPTImpl::blockOutputMaxima(const torch::Tensor &tokens)
{
    compat::GradDisabledGuard noGrad;
    std::vector<double> maxima;
    auto x = embed(tokens);
    for (size_t i = 0; i < m_blocks->size(); ++i) {
        x = m_blocks[i]->as<Block>()->forward(x);
        maxima.push_back(x.abs().max().item<double>());
    }
    return maxima;
}

NamedTensors GPTImpl::namedParameters() const
{
    NamedTensors out;
    for (const auto &item : named_parameters())
        out.emplace_back(item.key(), item.value());
    return out;
}

WeightFile GPTImpl::writeWeights(torch::serialize::OutputArchive &runState, const std::string &path)
{
    save(runState);
    return writeAtomically(runState, path);
}

void GPTImpl::readWeights(torch::serialize::InputArchive &runState, const std::string &path)
{
    loadArchive(runState, path);
    loadModelWeights(*this, runState, path);
}

} // namespace optlog
