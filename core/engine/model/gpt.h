// SPDX-License-Identifier: MIT
#pragma once

#include "core/engine/kernels/gemm.h"
#include "core/engine/model/languagemodel.h"

#include <torch/arg.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include <vector>

namespace optlog {

struct ModelConfig;
struct RunConfig;

struct GPTOptions
{
    GPTOptions(int64_t vocabSize, int64_t contextLength, int64_t width, int64_t layers, int64_t heads)
        : vocab_size_(vocabSize)
        , context_length_(contextLength)
        , width_(width)
        , layers_(layers)
        , heads_(heads)
    { }
    static GPTOptions from(const ModelConfig &model);
    // The model with the run's memory techniques and the paths of its matrix products.
    static GPTOptions from(const RunConfig &config);

    TORCH_ARG(int64_t, vocab_size);     // V
    TORCH_ARG(int64_t, context_length); // T, the longest sequence the position table covers
    TORCH_ARG(int64_t, width);          // C
    TORCH_ARG(int64_t, layers);         // L
    TORCH_ARG(int64_t, heads);          // H; C must be divisible by H
    TORCH_ARG(double, dropout) = 0.0;
    TORCH_ARG(bool, tied_head) = true; // the head reuses the token embedding matrix
    // Activation checkpointing: 0 = none, 1 = every block, k = blocks 0, k, 2k, ...
    TORCH_ARG(int64_t, checkpoint_every) = 0;
    // 0 = naive attention (the full T x T scores are kept for backward); n = queries in chunks
    // of n, each recomputed in backward so no T x T matrix is kept.
    TORCH_ARG(int64_t, attention_chunk) = 0;
    // LibTorch 2.x's scaled_dot_product_attention (flash or memory-efficient kernels where the
    // device has them); overrides attention_chunk.
    TORCH_ARG(bool, fused_attention) = false;
    // The path of each dtype's CPU products (runtime.gemm); ATen = LibTorch's own calls.
    TORCH_ARG(ProductPaths, gemm) = ProductPaths::aten();
};

// Multi-head causal self-attention. Naive: materialises the (B, H, T, T) scores and their
// softmax, the activation term quadratic in T. Chunked: queries in chunks, each chunk's scores
// recomputed in backward, so at most (B, H, chunk, T) exists at once. Fused (LibTorch 2.x only):
// one scaled_dot_product_attention call, whose kernel chooses what to keep.
class CausalSelfAttentionImpl : public torch::nn::Module
{
public:
    explicit CausalSelfAttentionImpl(const GPTOptions &options);
    torch::Tensor forward(const torch::Tensor &x); // (B, T, C) -> (B, T, C)

private:
    // q: (B, H, c, D) for positions offset .. offset + c; k, v: (B, H, n, D) for positions 0 .. n.
    torch::Tensor attend(const torch::Tensor &q, const torch::Tensor &k, const torch::Tensor &v, int64_t offset);

    int64_t m_heads;
    int64_t m_chunk;
    ProductPaths m_gemm;
    bool m_fused;
    double m_dropout;
    torch::nn::Linear m_qkv{nullptr};  // C -> 3C
    torch::nn::Linear m_proj{nullptr}; // C -> C
    torch::nn::Dropout m_attentionDropout{nullptr};
    torch::nn::Dropout m_residualDropout{nullptr};
};
TORCH_MODULE(CausalSelfAttention);

// The attention config's GPT runs on `device` in compute dtype `dtype`: memory.attention resolved
// ("auto" on this device and LibTorch), and for sdpa the kernel LibTorch chooses for the run's
// shapes ("sdpa (flash)", "sdpa (efficient)", "sdpa (math)", ...). Recorded with the run.
std::string attentionInUse(const RunConfig &config, c10::Device device, c10::ScalarType dtype);

class MlpImpl : public torch::nn::Module
{
public:
    explicit MlpImpl(const GPTOptions &options);
    torch::Tensor forward(const torch::Tensor &x);

private:
    ProductPaths m_gemm;
    torch::nn::Linear m_fc{nullptr};   // C -> 4C
    torch::nn::Linear m_proj{nullptr}; // 4C -> C
    torch::nn::Dropout m_dropout{nullptr};
};
TORCH_MODULE(Mlp);

// Pre-LayerNorm transformer block: x + attn(ln1(x)), then + mlp(ln2(x)).
class BlockImpl : public torch::nn::Module
{
public:
    explicit BlockImpl(const GPTOptions &options);
    torch::Tensor forward(const torch::Tensor &x);

private:
    torch::nn::LayerNorm m_ln1{nullptr};
    CausalSelfAttention m_attention{nullptr};
    torch::nn::LayerNorm m_ln2{nullptr};
    Mlp m_mlp{nullptr};
};
TORCH_MODULE(Block);

// Decoder-only GPT: token and position embeddings, L pre-LN blocks, final LayerNorm, head.
class GPTImpl : public torch::nn::Module, public LanguageModel
{
public:
    explicit GPTImpl(const GPTOptions &options);
    torch::Tensor forward(const torch::Tensor &tokens); // (B, T) int64 -> logits (B, T, V)
    int64_t parameterCount() const { return parameterElements(); }
    const GPTOptions &options() const { return m_options; }

    // LanguageModel
    at::Tensor logitsOf(const at::Tensor &tokens) override { return forward(tokens); }
    std::vector<double> blockOutputMaxima(const at::Tensor &tokens) override;
    NamedTensors namedParameters() const override;
    void setTraining(bool training) override { train(training); }
    void moveTo(c10::Device device, at::ScalarType dtype) override { to(device, dtype); }
    ProductPaths productPaths() const override { return m_options.gemm(); }
    // LibTorch's own archive: the module's tensors beside optlog's keys.
    WeightFile writeWeights(torch::serialize::OutputArchive &runState, const std::string &path) override;
    void readWeights(torch::serialize::InputArchive &runState, const std::string &path) override;

private:
    void initialiseWeights();
    torch::Tensor embed(const torch::Tensor &tokens);          // (B, T) -> (B, T, C), with dropout
    torch::Tensor logits(const torch::Tensor &residualStream); // (B, T, C) -> (B, T, V)

    GPTOptions m_options;
    torch::nn::Embedding m_tokenEmbedding{nullptr};    // (V, C)
    torch::nn::Embedding m_positionEmbedding{nullptr}; // (T, C)
    torch::nn::Dropout m_dropout{nullptr};
    torch::nn::ModuleList m_blocks{nullptr};
    torch::nn::LayerNorm m_finalNorm{nullptr};
    torch::nn::Linear m_head{nullptr}; // (V, C), no bias; unused when tied
};
TORCH_MODULE(GPT);

} // namespace optlog
