// SPDX-License-Identifier: MIT
// oneDNN's products against ATen's: values and gradients of the linear layer and of batched
// products over the strided views attention gives them, the cases oneDNN leaves to ATen, and a
// training run's losses whichever library computes its products.
#include "core/config/config.h"
#include "core/engine/gemm.h"
#include "core/engine/textdata.h"
#include "core/engine/trainer.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <torch/autograd.h>

#include <QtTest>

#include <atomic>
#include <cmath>

using namespace optlog;

namespace {

// The largest difference relative to the largest magnitude of the reference, computed in FP64.
double relativeError(const at::Tensor &actual, const at::Tensor &reference)
{
    const at::Tensor a = actual.to(at::kDouble), r = reference.to(at::kDouble);
    return (a - r).abs().max().item<double>() / std::max(1e-30, r.abs().max().item<double>());
}

// Values and gradients of `f` under both libraries, from the same leaves and output gradient.
void compareLibraries(const std::vector<at::Tensor> &leaves,
                      const std::function<at::Tensor(const std::vector<at::Tensor> &, GemmLibrary)> &f)
{
    std::vector<at::Tensor> results[2];
    const GemmLibrary libraries[2] = {GemmLibrary::ATen, GemmLibrary::OneDnn};
    at::Tensor outputGradient;
    for (int l = 0; l < 2; ++l) {
        std::vector<at::Tensor> inputs;
        for (const auto &leaf : leaves)
            inputs.push_back(leaf.detach().clone().requires_grad_(true));
        const at::Tensor out = f(inputs, libraries[l]);
        if (!outputGradient.defined())
            outputGradient = at::randn_like(out);
        out.backward(outputGradient);
        results[l].push_back(out.detach());
        for (const auto &input : inputs)
            results[l].push_back(input.grad());
    }
    QCOMPARE(results[1].size(), results[0].size());
    for (size_t i = 0; i < results[0].size(); ++i) {
        QCOMPARE(results[1][i].sizes(), results[0][i].sizes());
        const double error = relativeError(results[1][i], results[0][i]);
        if (!(error < 1e-5))
            QFAIL(qPrintable(QString("result %1 (0 = value, then each input's gradient): relative error %2")
                                 .arg(i)
                                 .arg(error)));
    }
}

} // namespace

class tst_Gemm : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void linearMatchesATen_data();
    void linearMatchesATen();
    void stridedBatchedProductsMatchATen();
    void casesOneDnnDoesNotTakeGoToATen();
    void settingNamesWhatIsRight();
    void trainingLossesAgreeWhicheverLibrary();
};

void tst_Gemm::initTestCase()
{
    if (!oneDnnGemmBuilt())
        QSKIP("this build has no oneDNN (libdnnl-dev): every product is ATen's");
    at::manual_seed(7);
}

void tst_Gemm::linearMatchesATen_data()
{
    QTest::addColumn<QList<int>>("inputShape");
    QTest::addColumn<int>("outputs");
    QTest::addColumn<bool>("bias");
    QTest::newRow("MLP, 3-D") << QList<int>{4, 32, 48} << 192 << true;
    QTest::newRow("head without bias") << QList<int>{3, 17, 40} << 61 << false;
    QTest::newRow("one row") << QList<int>{1, 1, 8} << 5 << true;
    QTest::newRow("2-D") << QList<int>{33, 7} << 3 << true;
}

void tst_Gemm::linearMatchesATen()
{
    QFETCH(QList<int>, inputShape);
    QFETCH(int, outputs);
    QFETCH(bool, bias);
    const std::vector<int64_t> shape(inputShape.begin(), inputShape.end());
    std::vector<at::Tensor> leaves{at::randn(shape), at::randn({outputs, shape.back()})};
    if (bias)
        leaves.push_back(at::randn({outputs}));
    compareLibraries(leaves, [bias](const std::vector<at::Tensor> &in, GemmLibrary library) {
        return gemmLinear(in[0], in[1], bias ? in[2] : at::Tensor(), library);
    });
}

void tst_Gemm::stridedBatchedProductsMatchATen()
{
    // Attention's operands: q, k, v are transposed views into one (B, T, 3, H, D) projection, the
    // scores scaled by 1/√D inside the product.
    const int64_t B = 3, T = 19, H = 4, D = 8;
    compareLibraries({at::randn({B, T, 3 * H * D})}, [&](const std::vector<at::Tensor> &in, GemmLibrary library) {
        const auto parts = in[0].view({B, T, 3, H, D}).unbind(2);
        const at::Tensor q = parts[0].transpose(1, 2), k = parts[1].transpose(1, 2), v = parts[2].transpose(1, 2);
        const at::Tensor scores = gemmMatmul(q, k.transpose(-2, -1), library, 1 / std::sqrt(double(D))); // (B, H, T, T)
        return gemmMatmul(at::softmax(scores, -1), v, library);                                        // (B, H, T, D)
    });
    // alpha is applied, by either library (the comparison above would not see both ignore it).
    const at::Tensor a = at::randn({2, 7, 5}), b = at::randn({2, 5, 3});
    for (const GemmLibrary library : {GemmLibrary::ATen, GemmLibrary::OneDnn})
        QVERIFY(relativeError(gemmMatmul(a, b, library, 0.3), at::matmul(a, b) * 0.3) < 1e-6);
    // A slice of keys (chunked attention) and an operand that needs a copy (every stride > 1).
    compareLibraries({at::randn({2, 5, 12, 6}), at::randn({2, 5, 6, 30})},
                     [](const std::vector<at::Tensor> &in, GemmLibrary library) {
                         return gemmMatmul(in[0].slice(2, 2, 9), in[1].slice(3, 0, 30, 3), library);
                     });
}

void tst_Gemm::casesOneDnnDoesNotTakeGoToATen()
{
    const at::Tensor x = at::randn({4, 6}), w = at::randn({5, 6}), b = at::randn({5});
    {
        // Under autocast the product is BF16, as at::linear's.
        at::autocast::set_cpu_enabled(true);
        const at::Tensor y = gemmLinear(x, w, b, GemmLibrary::OneDnn);
        at::autocast::set_cpu_enabled(false);
        at::autocast::clear_cache();
        QCOMPARE(y.scalar_type(), at::kBFloat16);
    }
    // 16-bit weights; broadcast batch dimensions.
    QCOMPARE(gemmLinear(x.to(at::kBFloat16), w.to(at::kBFloat16), b.to(at::kBFloat16), GemmLibrary::OneDnn)
                 .scalar_type(),
             at::kBFloat16);
    const at::Tensor a = at::randn({2, 3, 4}), shared = at::randn({4, 5});
    QVERIFY(at::allclose(gemmMatmul(a, shared, GemmLibrary::OneDnn), at::matmul(a, shared)));
}

void tst_Gemm::settingNamesWhatIsRight()
{
    QCOMPARE(gemmLibraryFrom("auto"), GemmLibrary::OneDnn);
    QCOMPARE(gemmLibraryFrom("aten"), GemmLibrary::ATen);
    QVERIFY(describe(GemmLibrary::OneDnn).rfind("onednn ", 0) == 0);
    try {
        gemmLibraryFrom("mkl");
        QFAIL("an unknown library was accepted");
    } catch (const std::runtime_error &e) {
        QVERIFY2(QString(e.what()).contains("\"auto\", \"onednn\" or \"aten\""), e.what());
    }
}

void tst_Gemm::trainingLossesAgreeWhicheverLibrary()
{
    // Fifty steps of the smoke model, dropout on, naive and chunked attention: the same losses
    // to within 1e-5 nats whichever library computes the FP32 products.
    for (const std::string attention : {"naive", "chunked"}) {
        std::vector<double> losses[2];
        for (const std::string gemm : {"aten", "onednn"}) {
            const RunConfig config = loadRunConfig(
                "smoke", "",
                {"data.corpus=\"generated\"", "train.steps=50", "train.eval_interval=1000000", "model.dropout=0.1",
                 "memory.attention=\"" + attention + "\"", "memory.attention_chunk=8", "runtime.gemm=\"" + gemm + "\"",
                 "runtime.speed_probe_every=0"});
            Trainer trainer(config, loadTokens(config.data, config.model.vocabSize, config.model.contextLength), 1);
            struct Collect : TrainingObserver
            {
                std::vector<double> *losses = nullptr;
                void step(const StepMetrics &m) override { losses->push_back(m.trainLoss); }
            } collect;
            collect.losses = &losses[gemm == "onednn"];
            std::atomic<bool> stop{false};
            QCOMPARE(int(trainer.run(collect, stop).outcome), int(Outcome::Completed));
        }
        QCOMPARE(losses[1].size(), size_t(50));
        QCOMPARE(losses[0].size(), losses[1].size());
        double worst = 0;
        for (size_t i = 0; i < losses[0].size(); ++i)
            worst = std::max(worst, std::abs(losses[0][i] - losses[1][i]));
        QVERIFY2(worst < 1e-5, qPrintable(QString::fromStdString(attention) + ": losses differ by up to "
                                          + QString::number(worst)));
        // Different summation orders round differently: bitwise equal losses would mean that
        // oneDNN computed nothing.
        QVERIFY2(worst > 0, "the two libraries gave bitwise the same losses: oneDNN was not used");
    }
}

QTEST_GUILESS_MAIN(tst_Gemm)
#include "tst_gemm.moc"
