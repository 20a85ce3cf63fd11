// SPDX-License-Identifier: MIT
// The one-pass AdamW against LibTorch's: weights and moments step for step, the tensors it leaves
// to LibTorch, saved state read by either, and fifty steps of a model's losses.
#include "core/config/config.h"
#include "core/engine/compat/torchcompat.h"
#include "core/engine/data/textdata.h"
#include "core/engine/kernels/fusedadamw.h"
#include "core/engine/model/gpt.h"
#include "core/engine/train/trainer.h"

#include <ATen/ATen.h>
#include <torch/nn/utils/clip_grad.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <QtTest>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <type_traits>

using namespace optlog;

namespace {

double relativeError(const at::Tensor &actual, const at::Tensor &reference)
{
    const at::Tensor a = actual.to(at::kDouble), r = reference.to(at::kDouble);
    return (a - r).abs().max().item<double>() / std::max(1e-30, r.abs().max().item<double>());
}

// The trainer's two groups (decayed matrices, plain vectors) with this test's learning rate and the
// config's other defaults (betas 0.9 and 0.95, eps 1e-8, weight decay 0.1).
template<typename Optimizer>
std::unique_ptr<torch::optim::AdamW> adamw(const std::vector<at::Tensor> &decayed, const std::vector<at::Tensor> &plain,
                                           double lr = 3e-3)
{
    static_assert(std::is_same_v<Optimizer, FusedAdamW> || std::is_same_v<Optimizer, torch::optim::AdamW>);
    TrainConfig train;
    train.learningRate = lr;
    return makeAdamW(decayed, plain, train, std::is_same_v<Optimizer, torch::optim::AdamW>);
}

std::vector<at::Tensor> leaves(const std::vector<std::vector<int64_t>> &shapes, uint64_t seed, at::ScalarType dtype)
{
    at::manual_seed(seed);
    std::vector<at::Tensor> out;
    for (const auto &shape : shapes)
        out.push_back(at::randn(shape, at::TensorOptions().dtype(dtype)).requires_grad_(true));
    return out;
}

std::vector<at::Tensor> clones(const std::vector<at::Tensor> &tensors)
{
    std::vector<at::Tensor> out;
    for (const auto &t : tensors)
        out.push_back(t.detach().clone().requires_grad_(true));
    return out;
}

// The same gradients on both sets: random, with a spread of magnitudes and some exact zeros.
void setGradients(const std::vector<at::Tensor> &a, const std::vector<at::Tensor> &b, int64_t step)
{
    at::manual_seed(uint64_t(1000 + step));
    for (size_t i = 0; i < a.size(); ++i) {
        const at::Tensor g = at::randn_like(a[i]) * std::pow(10.0, double(int64_t(i % 5) - 3))
                             * (at::rand_like(a[i]) > 0.1);
        a[i].mutable_grad() = g.clone();
        b[i].mutable_grad() = g.clone();
    }
}

// Where ATen runs its AVX2 or AVX-512 kernels (it picks the widest the CPU has, unless
// ATEN_CPU_CAPABILITY says otherwise), the one-pass step is bitwise LibTorch's; elsewhere the
// multiply-adds LibTorch's baseline kernels round twice may differ by an ulp. So may the square
// root: the one-pass step's is correctly rounded, as Debian's LibTorch's is, while a LibTorch
// built with MKL (PyTorch's wheels) takes MKL's vector square root, within an ulp.
bool sqrtCorrectlyRounded()
{
    const at::Tensor x = at::rand({4096}) * 1e-3;
    const at::Tensor root = x.sqrt();
    for (int64_t i = 0; i < x.numel(); ++i)
        if (root.data_ptr<float>()[i] != std::sqrt(x.data_ptr<float>()[i]))
            return false;
    return true;
}

bool bitwiseExpected()
{
    const char *capability = std::getenv("ATEN_CPU_CAPABILITY");
    static const bool exactRoot = sqrtCorrectlyRounded();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")
           && !(capability && std::string(capability) == "default") && exactRoot;
}

const torch::optim::AdamWParamState &stateOf(const torch::optim::AdamW &optimizer, const at::Tensor &p)
{
    const auto &found = optimizer.state().at(compat::optimizerStateKey(p));
    return static_cast<const torch::optim::AdamWParamState &>(*found);
}

} // namespace

class tst_FusedAdamW : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void stepsAsLibTorchDoes();
    void leavesWhatItCannotFuseToLibTorch();
    void savedStateReadsEitherWay();
    void modelLossesAgreeOverFiftySteps();
};

void tst_FusedAdamW::stepsAsLibTorchDoes()
{
    // Sizes below, at and above one parallel chunk (32768), odd lengths that leave a remainder
    // past every vector width.
    const auto reference = leaves({{33, 65}, {257, 129}, {40000}, {3}, {1}}, 7, at::kFloat);
    const auto fused = clones(reference);
    auto libtorch = adamw<torch::optim::AdamW>({reference[0], reference[1], reference[2]}, {reference[3], reference[4]});
    auto ours = adamw<FusedAdamW>({fused[0], fused[1], fused[2]}, {fused[3], fused[4]});
    for (int64_t step = 0; step < 20; ++step) {
        setGradients(reference, fused, step);
        libtorch->step();
        ours->step();
        for (size_t i = 0; i < reference.size(); ++i) {
            const auto &r = stateOf(*libtorch, reference[i]), &f = stateOf(*ours, fused[i]);
            QCOMPARE(f.step(), r.step());
            const QString where = QString("tensor %1 of %2 elements, step %3").arg(i).arg(reference[i].numel()).arg(step);
            QVERIFY2(relativeError(fused[i], reference[i]) < 1e-6, qPrintable(where + ": weights differ"));
            QVERIFY2(relativeError(f.exp_avg(), r.exp_avg()) < 1e-6, qPrintable(where + ": first moments differ"));
            QVERIFY2(relativeError(f.exp_avg_sq(), r.exp_avg_sq()) < 1e-6,
                     qPrintable(where + ": second moments differ"));
            if (bitwiseExpected()) {
                QVERIFY2(at::equal(fused[i], reference[i]), qPrintable(where + ": weights not bitwise LibTorch's"));
                QVERIFY2(at::equal(f.exp_avg(), r.exp_avg()) && at::equal(f.exp_avg_sq(), r.exp_avg_sq()),
                         qPrintable(where + ": moments not bitwise LibTorch's"));
            }
        }
    }
    // A parameter without a gradient neither moves nor gets a state.
    const auto idle = leaves({{4, 4}}, 9, at::kFloat);
    const at::Tensor before = idle[0].detach().clone();
    auto lone = adamw<FusedAdamW>(idle, {});
    lone->step();
    QVERIFY(at::equal(idle[0], before));
    QVERIFY(lone->state().empty());
}

void tst_FusedAdamW::leavesWhatItCannotFuseToLibTorch()
{
    // FP64 weights, a transposed (non-contiguous) weight: LibTorch's step, bitwise.
    for (const bool transposed : {false, true}) {
        auto reference = leaves({{16, 24}, {24}}, 11, transposed ? at::kFloat : at::kDouble);
        if (transposed)
            reference[0] = reference[0].detach().t().requires_grad_(true);
        std::vector<at::Tensor> fused = clones(reference);
        if (transposed)
            fused[0] = reference[0].detach().t().clone().t().requires_grad_(true);
        QCOMPARE(fused[0].is_contiguous(), !transposed);
        auto libtorch = adamw<torch::optim::AdamW>({reference[0]}, {reference[1]});
        auto ours = adamw<FusedAdamW>({fused[0]}, {fused[1]});
        for (int64_t step = 0; step < 5; ++step) {
            setGradients(reference, fused, step);
            libtorch->step();
            ours->step();
        }
        for (size_t i = 0; i < reference.size(); ++i)
            QVERIFY2(at::equal(fused[i], reference[i]), transposed ? "transposed weight" : "FP64 weights");
    }
}

void tst_FusedAdamW::savedStateReadsEitherWay()
{
    // Saved by the one-pass step, loaded by LibTorch's (and the other way): both go on alike.
    const auto a = leaves({{64, 32}, {32}}, 13, at::kFloat);
    const auto b = clones(a);
    auto first = adamw<FusedAdamW>({a[0]}, {a[1]});
    for (int64_t step = 0; step < 3; ++step) {
        setGradients(a, clones(a), step);
        first->step();
    }
    torch::serialize::OutputArchive out;
    first->save(out);
    std::ostringstream bytes;
    out.save_to(bytes);
    for (int64_t i = 0; i < 2; ++i)
        b[size_t(i)].detach().copy_(a[size_t(i)]);
    auto second = adamw<torch::optim::AdamW>({b[0]}, {b[1]});
    torch::serialize::InputArchive in;
    std::istringstream read(bytes.str());
    in.load_from(read);
    second->load(in);
    QCOMPARE(stateOf(*second, b[0]).step(), int64_t(3));
    QVERIFY(at::equal(stateOf(*second, b[0]).exp_avg(), stateOf(*first, a[0]).exp_avg()));
    setGradients(a, b, 3);
    first->step();
    second->step();
    QVERIFY(relativeError(a[0], b[0]) < 1e-6);
    QCOMPARE(stateOf(*second, b[0]).step(), int64_t(4));
}

void tst_FusedAdamW::modelLossesAgreeOverFiftySteps()
{
    // The smoke preset's model, learning rate and text, trained fifty steps with clipping by each
    // optimizer from the same weights on the same batches: the same losses.
    const RunConfig config = loadRunConfig("smoke", "", {"data.corpus=\"generated\"", "model.dropout=0.0"});
    const TokenSplit data = loadTokens(config.data, config.model.vocabSize, config.model.contextLength);
    std::vector<double> losses[2];
    for (const bool fusedStep : {false, true}) {
        at::manual_seed(5);
        GPT model(GPTOptions::from(config));
        model->train();
        std::vector<at::Tensor> decayed, plain;
        for (const auto &p : model->parameters())
            (p.dim() >= 2 ? decayed : plain).push_back(p);
        const double lr = config.train.learningRate;
        auto optimizer = fusedStep ? adamw<FusedAdamW>(decayed, plain, lr)
                                   : adamw<torch::optim::AdamW>(decayed, plain, lr);
        BatchSampler sampler(data.train, config.model.contextLength, 17);
        for (int64_t step = 0; step < 50; ++step) {
            const Batch batch = sampler.next(config.train.microbatch);
            optimizer->zero_grad();
            const at::Tensor loss = model->loss(batch.inputs, batch.targets);
            loss.backward();
            torch::nn::utils::clip_grad_norm_(model->parameters(), config.train.gradClip);
            optimizer->step();
            losses[fusedStep].push_back(loss.item<double>());
        }
    }
    double worst = 0;
    for (size_t i = 0; i < losses[0].size(); ++i)
        worst = std::max(worst, std::abs(losses[0][i] - losses[1][i]));
    if (bitwiseExpected())
        QVERIFY2(worst == 0, qPrintable("losses not bitwise LibTorch's: up to " + QString::number(worst) + " apart"));
    // Elsewhere an ulp in a step grows: Adam divides by √v, so a weight whose gradient is near
    // zero moves by a full step either way. On ATen's baseline kernels, 3e-5 nats in 50 steps.
    QVERIFY2(worst < 1e-4, qPrintable("losses differ by up to " + QString::number(worst)));
    QVERIFY2(losses[1].back() < losses[1].front() - 0.1, "the model did not learn: the comparison would be empty");
}

QTEST_GUILESS_MAIN(tst_FusedAdamW)
#include "tst_fusedadamw.moc"
