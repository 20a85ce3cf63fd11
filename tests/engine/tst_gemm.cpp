// SPDX-License-Identifier: MIT
// oneDNN's products (sgemm and the matmul primitive) against ATen's: values and gradients of the
// linear layer and of batched products over the strided views attention gives them, the cases
// oneDNN leaves to ATen, the setting's paths, and a training run's losses whichever path computes
// its products.
#include "core/config/config.h"
#include "core/engine/data/textdata.h"
#include "core/engine/kernels/gemm.h"
#include "core/engine/memory/countingallocator.h"
#include "core/engine/precision/precision.h"
#include "core/engine/train/trainer.h"

#include <ATen/ATen.h>
#include <torch/autograd.h>

#include <QtTest>
#include <atomic>
#include <cmath>
#include <map>
#include <tuple>

using namespace optlog;

namespace {

// The largest difference relative to the largest magnitude of the reference, computed in FP64.
double relativeError(const at::Tensor &actual, const at::Tensor &reference)
{
    const at::Tensor a = actual.to(at::kDouble), r = reference.to(at::kDouble);
    return (a - r).abs().max().item<double>() / std::max(1e-30, r.abs().max().item<double>());
}

// oneDNN's FP32 paths: sgemm and the matmul primitive.
const ProductPath kOneDnnPaths[] = {ProductPath::Sgemm, ProductPath::Primitive};

// Values and gradients of `f` on each of oneDNN's FP32 paths against ATen's, from the same leaves
// and output gradient.
void compareLibraries(const std::vector<at::Tensor> &leaves,
                      const std::function<at::Tensor(const std::vector<at::Tensor> &, ProductPaths)> &f)
{
    at::Tensor outputGradient;
    const auto results = [&](ProductPaths paths) {
        std::vector<at::Tensor> inputs;
        for (const auto &leaf : leaves)
            inputs.push_back(leaf.detach().clone().requires_grad_(true));
        const at::Tensor out = f(inputs, paths);
        if (!outputGradient.defined())
            outputGradient = at::randn_like(out);
        out.backward(outputGradient);
        std::vector<at::Tensor> all{out.detach()};
        for (const auto &input : inputs)
            all.push_back(input.grad());
        return all;
    };
    const std::vector<at::Tensor> aten = results(ProductPaths::aten());
    for (const ProductPath path : kOneDnnPaths) {
        const std::vector<at::Tensor> ours = results({path, path});
        QCOMPARE(ours.size(), aten.size());
        for (size_t i = 0; i < aten.size(); ++i) {
            QCOMPARE(ours[i].sizes(), aten[i].sizes());
            const double error = relativeError(ours[i], aten[i]);
            if (!(error < 1e-5))
                QFAIL(qPrintable(QString("%1, result %2 (0 = value, then each input's gradient): relative error %3")
                                     .arg(QString::fromStdString(pathName(path)))
                                     .arg(i)
                                     .arg(error)));
        }
    }
}

// `f`'s value and its leaves' gradients, from copies of the leaves, for the output gradient `g`
// (made on the first call when undefined): what a product hands on, whatever computed it.
std::vector<at::Tensor> valueAndGradients(const std::vector<at::Tensor> &leaves,
                                          const std::function<at::Tensor(const std::vector<at::Tensor> &)> &f,
                                          at::Tensor &g)
{
    std::vector<at::Tensor> inputs;
    for (const auto &leaf : leaves)
        inputs.push_back(leaf.detach().clone().requires_grad_(true));
    const at::Tensor out = f(inputs);
    if (!g.defined())
        g = at::randn(out.sizes()).to(at::kBFloat16).to(out.scalar_type()); // as exact in BF16 as in FP64
    out.backward(g.to(out.scalar_type()));
    std::vector<at::Tensor> results{out.detach()};
    for (const auto &input : inputs)
        results.push_back(input.grad());
    return results;
}

// BF16 products on one of oneDNN's paths (its matmul primitive, or sgemm widened) against
// LibTorch's own BF16 products and an FP64 reference on the same BF16-rounded operands: the
// same dtypes and shapes as LibTorch's, and no further from the reference than LibTorch (or than
// BF16's rounding). `f` runs under BF16 autocast when `autocast` is true. Returns how many BF16
// products oneDNN's path computed.
int64_t compareBf16(const std::vector<at::Tensor> &leaves,
                    const std::function<at::Tensor(const std::vector<at::Tensor> &, ProductPaths)> &f, bool autocast,
                    ProductPath path)
{
    const auto run = [&](ProductPaths paths, at::Tensor &g) {
        AutocastGuard bf16(c10::DeviceType::CPU, at::kBFloat16, autocast);
        return valueAndGradients(
            leaves, [&](const std::vector<at::Tensor> &in) { return f(in, paths); }, g);
    };
    at::Tensor g;
    const std::vector<at::Tensor> aten = run(ProductPaths::aten(), g);
    const int64_t productsBefore = bf16ProductCount();
    const std::vector<at::Tensor> ours = run({ProductPath::ATen, path}, g);
    const int64_t products = bf16ProductCount() - productsBefore;
    // The reference: FP64 throughout, from the operands as the BF16 products see them.
    std::vector<at::Tensor> rounded;
    for (const auto &leaf : leaves)
        rounded.push_back(leaf.to(at::kBFloat16).to(at::kDouble));
    at::Tensor g64 = g.to(at::kDouble);
    const std::vector<at::Tensor> reference = valueAndGradients(
        rounded, [&](const std::vector<at::Tensor> &in) { return f(in, ProductPaths::aten()); }, g64);
    for (size_t i = 0; i < aten.size(); ++i) {
        if (ours[i].scalar_type() != aten[i].scalar_type() || !ours[i].sizes().equals(aten[i].sizes()))
            QTest::qFail(qPrintable(QString("result %1: %2 of %3, LibTorch gives %4 of %5")
                                        .arg(i)
                                        .arg(c10::toString(ours[i].scalar_type()))
                                        .arg(QString::fromStdString(c10::str(ours[i].sizes())))
                                        .arg(c10::toString(aten[i].scalar_type()))
                                        .arg(QString::fromStdString(c10::str(aten[i].sizes())))),
                         __FILE__, __LINE__);
        const double error = relativeError(ours[i], reference[i]), theirs = relativeError(aten[i], reference[i]);
        if (!(error <= std::max(theirs, std::ldexp(1.0, -8))))
            QTest::qFail(qPrintable(QString("result %1 (0 = value, then each input's gradient): relative error %2 "
                                            "against FP64, LibTorch's own BF16 products %3")
                                        .arg(i)
                                        .arg(error)
                                        .arg(theirs)),
                         __FILE__, __LINE__);
    }
    return products;
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
    void productsOverRowsFourKiBApartMatchATen();
    void bf16ProductsMatchAReference_data();
    void bf16ProductsMatchAReference();
    void casesOneDnnDoesNotTakeGoToATen();
    void settingNamesWhatIsRight();
    void trainingLossesAgreeWhicheverLibrary();
};

void tst_Gemm::initTestCase()
{
#ifdef OPTLOG_EXPECT_ONEDNN
    // CMake found oneDNN: a gemm.cpp compiled without it is a build that lost its definition.
    QVERIFY2(oneDnnGemmBuilt(), "the build found oneDNN, but gemm.cpp was compiled without OPTLOG_HAVE_ONEDNN");
#endif
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
    compareLibraries(leaves, [bias](const std::vector<at::Tensor> &in, ProductPaths paths) {
        return gemmLinear(in[0], in[1], bias ? in[2] : at::Tensor(), paths);
    });
}

void tst_Gemm::stridedBatchedProductsMatchATen()
{
    // Attention's operands: q, k, v are transposed views into one (B, T, 3, H, D) projection, the
    // scores scaled by 1/√D inside the product.
    const int64_t B = 3, T = 19, H = 4, D = 8;
    compareLibraries({at::randn({B, T, 3 * H * D})}, [&](const std::vector<at::Tensor> &in, ProductPaths paths) {
        const auto parts = in[0].view({B, T, 3, H, D}).unbind(2);
        const at::Tensor q = parts[0].transpose(1, 2), k = parts[1].transpose(1, 2), v = parts[2].transpose(1, 2);
        const at::Tensor scores = gemmMatmul(q, k.transpose(-2, -1), paths, 1 / std::sqrt(double(D))); // (B, H, T, T)
        return gemmMatmul(at::softmax(scores, -1), v, paths);                                          // (B, H, T, D)
    });
    // alpha is applied, on every path (the comparison above would not see both ignore it).
    const at::Tensor a = at::randn({2, 7, 5}), b = at::randn({2, 5, 3});
    for (const ProductPath path : {ProductPath::ATen, ProductPath::Sgemm, ProductPath::Primitive})
        QVERIFY(relativeError(gemmMatmul(a, b, {path, path}, 0.3), at::matmul(a, b) * 0.3) < 1e-6);
    // A slice of keys (chunked attention) and an operand that needs a copy (every stride > 1).
    compareLibraries({at::randn({2, 5, 12, 6}), at::randn({2, 5, 6, 30})},
                     [](const std::vector<at::Tensor> &in, ProductPaths paths) {
                         return gemmMatmul(in[0].slice(2, 2, 9), in[1].slice(3, 0, 30, 3), paths);
                     });
}

void tst_Gemm::productsOverRowsFourKiBApartMatchATen()
{
    // An MLP whose hidden rows are 1024 floats (4 KiB) apart, over 600 rows: both weight gradients
    // read such rows across their depth, and run on padded copies (the projection's 256 rows at a
    // time, the first layer's, whose input gradient is smaller, 64).
    const int64_t paddedBefore = paddedProductCount();
    compareLibraries({at::randn({2, 300, 200}), at::randn({1024, 200}), at::randn({1024}), at::randn({24, 1024}),
                      at::randn({24})},
                     [](const std::vector<at::Tensor> &in, ProductPaths paths) {
                         const at::Tensor hidden = at::gelu(gemmLinear(in[0], in[1], in[2], paths));
                         return gemmLinear(hidden, in[3], in[4], paths);
                     });
    QCOMPARE(paddedProductCount() - paddedBefore, int64_t(2));

    // The copies take no more than the input's gradient that follows them: backward allocates
    // at its highest point what it hands on (the weight's, the input's and the bias's
    // gradients), padded or not.
    CountingAllocator::install();
    auto &counter = CountingAllocator::instance();
    struct Backward
    {
        int64_t padded = 0; // products that ran padded
        int64_t beyond = 0; // bytes at backward's highest point beyond the gradients handed on
    };
    const auto backward = [&counter](int64_t rows, int64_t inputs, int64_t outputs, bool inputGradient,
                                     bool bias = true) {
        const at::Tensor x = at::randn({rows, inputs}).requires_grad_(inputGradient);
        const at::Tensor w = at::randn({outputs, inputs}).requires_grad_(true);
        const at::Tensor b = bias ? at::randn({outputs}).requires_grad_(true) : at::Tensor();
        const at::Tensor y = gemmLinear(x, w, b, ProductPaths::onednn()), g = at::randn_like(y);
        const int64_t before = counter.currentBytes(), padded = paddedProductCount();
        counter.resetPeak();
        y.backward(g);
        const int64_t handedOn = (w.numel() + (bias ? b.numel() : 0) + (inputGradient ? x.numel() : 0))
                                 * int64_t(sizeof(float));
        return Backward{paddedProductCount() - padded, counter.peakBytes() - before - handedOn};
    };
    const auto padded = [&](int64_t rows, int64_t inputs, int64_t outputs, bool inputGradient) {
        const Backward b = backward(rows, inputs, outputs, inputGradient);
        if (b.beyond != 0)
            QTest::qFail(qPrintable(QString("%1 rows, %2 to %3: backward's peak %4 bytes beyond its gradients")
                                        .arg(rows)
                                        .arg(inputs)
                                        .arg(outputs)
                                        .arg(b.beyond)),
                         __FILE__, __LINE__);
        return b.padded;
    };
    QCOMPARE(padded(600, 1024, 24, true), int64_t(1));  // the input read across rows 4 KiB apart
    QCOMPARE(padded(600, 512, 1024, true), int64_t(1)); // the output's gradient
    QCOMPARE(padded(600, 200, 1024, true), int64_t(1)); // the same in chunks of 64
    // Nothing to pad within, rows not 4 KiB apart, or too few of them: read in place.
    QCOMPARE(padded(600, 1024, 24, false), int64_t(0));
    QCOMPARE(padded(600, 40, 1024, true), int64_t(0));
    QCOMPARE(padded(600, 1000, 24, true), int64_t(0));
    QCOMPARE(padded(64, 1024, 24, true), int64_t(0));
    // The head (no bias, another product): its weight's gradient comes back transposed and
    // autograd copies it into the weight's layout, padded or not; padding adds nothing to that.
    const Backward head = backward(600, 200, 1024, true, false), unpaddedHead = backward(600, 200, 1000, true, false);
    QCOMPARE(head.padded, int64_t(1));
    QCOMPARE(unpaddedHead.padded, int64_t(0));
    const int64_t floatBytes = sizeof(float);
    QCOMPARE(head.beyond - 1024 * 200 * floatBytes, unpaddedHead.beyond - 1000 * 200 * floatBytes);
}

void tst_Gemm::bf16ProductsMatchAReference_data()
{
    QTest::addColumn<bool>("autocast");
    QTest::addColumn<int>("path");
    // Each BF16 path oneDNN has here (the primitive needs AVX-512).
    for (const ProductPath path : productPathCandidates(at::kBFloat16)) {
        if (path == ProductPath::ATen)
            continue;
        const std::string name = pathName(path);
        QTest::addRow("%s, under autocast, FP32 operands", name.c_str()) << true << int(path);
        QTest::addRow("%s, BF16 operands", name.c_str()) << false << int(path);
    }
}

void tst_Gemm::bf16ProductsMatchAReference()
{
    QFETCH(bool, autocast);
    QFETCH(int, path);
    // Operands of the dtype the mode gives them: FP32 under autocast, BF16 weights otherwise.
    const auto leaf = [autocast](std::vector<int64_t> shape) {
        return autocast ? at::randn(shape) : at::randn(shape).to(at::kBFloat16);
    };
    const auto linear = [](const std::vector<at::Tensor> &in, ProductPaths paths) {
        return gemmLinear(in[0], in[1], in[2], paths);
    };
    const auto head = [](const std::vector<at::Tensor> &in, ProductPaths paths) { // no bias
        return gemmLinear(in[0], in[1], at::Tensor(), paths);
    };
    // Larger than one widened tile (128) in every direction, with a remainder, and smaller than
    // one. Forward and the two gradients' products, each through oneDNN's path.
    for (const auto &[rows, inputs, outputs] : {std::tuple{300, 200, 260}, std::tuple{5, 7, 3}}) {
        QCOMPARE(compareBf16({leaf({rows, inputs}), leaf({outputs, inputs}), leaf({outputs})}, linear, autocast,
                             ProductPath(path)),
                 3);
        QCOMPARE(compareBf16({leaf({2, rows, inputs}), leaf({outputs, inputs})}, head, autocast, ProductPath(path)), 3);
    }
    // Attention over strided views of one projection, scaled inside the product.
    const int64_t B = 2, T = 150, H = 3, D = 16;
    const auto attention = [&](const std::vector<at::Tensor> &in, ProductPaths paths) {
        const auto parts = in[0].view({B, T, 3, H, D}).unbind(2);
        const at::Tensor q = parts[0].transpose(1, 2), k = parts[1].transpose(1, 2), v = parts[2].transpose(1, 2);
        const at::Tensor scores = gemmMatmul(q, k.transpose(-2, -1), paths, 0.25);
        return gemmMatmul(at::softmax(scores, -1).to(q.scalar_type()), v, paths);
    };
    QCOMPARE(compareBf16({leaf({B, T, 3 * H * D})}, attention, autocast, ProductPath(path)), 6);
}

void tst_Gemm::casesOneDnnDoesNotTakeGoToATen()
{
    const at::Tensor x = at::randn({4, 6}), w = at::randn({5, 6}), b = at::randn({5});
    {
        // Under autocast the product is BF16, as at::linear's.
        at::Tensor y;
        {
            AutocastGuard bf16(c10::DeviceType::CPU, at::kBFloat16, true);
            y = gemmLinear(x, w, b, ProductPaths::onednn());
        }
        QCOMPARE(y.scalar_type(), at::kBFloat16);
    }
    // 16-bit weights; broadcast batch dimensions.
    QCOMPARE(gemmLinear(x.to(at::kBFloat16), w.to(at::kBFloat16), b.to(at::kBFloat16), ProductPaths::onednn())
                 .scalar_type(),
             at::kBFloat16);
    const at::Tensor a = at::randn({2, 3, 4}), shared = at::randn({4, 5});
    QVERIFY(at::allclose(gemmMatmul(a, shared, ProductPaths::onednn()), at::matmul(a, shared)));
}

void tst_Gemm::settingNamesWhatIsRight()
{
    const ProductPaths defaults = ProductPaths::onednn();
    QCOMPARE(defaults.float32, ProductPath::Sgemm);
    QCOMPARE(defaults.bfloat16, bf16PrimitiveAvailable() ? ProductPath::Primitive : ProductPath::Sgemm);
    QCOMPARE(productPathsFrom("auto", at::kBFloat16), defaults);
    QCOMPARE(productPathsFrom("onednn", at::kBFloat16, "aten"), defaults); // only "auto" takes a tuning
    QCOMPARE(productPathsFrom("aten", at::kFloat), ProductPaths::aten());
    QCOMPARE(productPathsFrom("sgemm", at::kFloat), (ProductPaths{ProductPath::Sgemm, ProductPath::Sgemm}));
    // "auto" takes the tuned path for the run's compute dtype only, and ignores one this CPU lacks.
    QCOMPARE(productPathsFrom("auto", at::kBFloat16, "aten"), (ProductPaths{defaults.float32, ProductPath::ATen}));
    QCOMPARE(productPathsFrom("auto", at::kFloat, "primitive"),
             (ProductPaths{ProductPath::Primitive, defaults.bfloat16}));
    QCOMPARE(productPathsFrom("auto", at::kFloat, "cublas"), defaults);
    // Each path names what it reaches: the kernel oneDNN's log or the primitive names, or its ISA.
    for (const ProductPath path : productPathCandidates(at::kBFloat16)) {
        const std::string reached = kernelsReached(path, at::kBFloat16);
        QVERIFY2(reached.rfind("oneDNN ", 0) == 0 && reached.find("none") == std::string::npos
                     && reached.size() > std::string("oneDNN 2.6.3, ").size(),
                 reached.c_str());
    }
    QVERIFY2(describePath(ProductPath::Sgemm, at::kBFloat16).rfind("sgemm, widened (oneDNN ", 0) == 0,
             describePath(ProductPath::Sgemm, at::kBFloat16).c_str());
    const std::string oneDnn = describeOneDnn();
    QVERIFY2(oneDnn.rfind("oneDNN ", 0) == 0 && oneDnn.find(", AMX ") != std::string::npos, oneDnn.c_str());
    try {
        productPathsFrom("mkl", at::kFloat);
        QFAIL("an unknown path was accepted");
    } catch (const std::runtime_error &e) {
        QVERIFY2(QString(e.what()).contains("\"aten\", \"sgemm\" or \"primitive\""), e.what());
    }
    if (!bf16PrimitiveAvailable()) {
        try {
            productPathsFrom("primitive", at::kBFloat16);
            QFAIL("the primitive was accepted for BF16 products where oneDNN has no BF16 matmul");
        } catch (const std::runtime_error &e) {
            QVERIFY2(QString(e.what()).contains("no BF16 matmul on this CPU"), e.what());
        }
    }
}

void tst_Gemm::trainingLossesAgreeWhicheverLibrary()
{
    // Fifty steps of the smoke model, dropout on, naive and chunked attention: the same losses
    // to within 1e-5 nats whichever path computes the FP32 products.
    for (const std::string attention : {"naive", "chunked"}) {
        std::map<std::string, std::vector<double>> losses;
        for (const std::string gemm : {"aten", "sgemm", "primitive"}) {
            const RunConfig config = loadRunConfig("smoke", "",
                                                   {"data.corpus=\"generated\"", "train.steps=50",
                                                    "train.eval_interval=1000000", "model.dropout=0.1",
                                                    "memory.attention=\"" + attention + "\"", "memory.attention_chunk=8",
                                                    "runtime.gemm=\"" + gemm + "\"", "runtime.speed_probe_every=0"});
            Trainer trainer(config, loadTokens(config.data, config.model.vocabSize, config.model.contextLength), 1);
            struct Collect : TrainingObserver
            {
                std::vector<double> *losses = nullptr;
                void step(const StepMetrics &m) override { losses->push_back(m.trainLoss); }
            } collect;
            collect.losses = &losses[gemm];
            std::atomic<bool> stop{false};
            QCOMPARE(int(trainer.run(collect, stop).outcome), int(Outcome::Completed));
        }
        const std::vector<double> &aten = losses["aten"];
        QCOMPARE(aten.size(), size_t(50));
        for (const std::string gemm : {"sgemm", "primitive"}) {
            const std::vector<double> &ours = losses[gemm];
            QCOMPARE(ours.size(), aten.size());
            double worst = 0;
            for (size_t i = 0; i < aten.size(); ++i)
                worst = std::max(worst, std::abs(aten[i] - ours[i]));
            const QString which = QString::fromStdString(attention + ", " + gemm);
            QVERIFY2(worst < 1e-5, qPrintable(which + ": losses differ by up to " + QString::number(worst)));
            // Different summation orders round differently: bitwise equal losses would mean that
            // oneDNN computed nothing.
            QVERIFY2(worst > 0, qPrintable(which + ": bitwise the same losses as ATen's: oneDNN was not used"));
        }
    }
}

QTEST_GUILESS_MAIN(tst_Gemm)
#include "tst_gemm.moc"
