// SPDX-License-Identifier: MIT
#include "core/config/config.h"
#include "core/engine/compat/torchcompat.h"
#include "core/engine/model/gpt.h"
#include "core/engine/train/accumulation.h"
#include "core/engine/train/trainer.h"
#include "core/memorymodel/modelshape.h"

#include <ATen/ATen.h>
#include <torch/utils.h>

#include <QtTest>

using namespace optlog;

namespace {

ModelConfig small(int64_t width, int64_t layers, int64_t heads, bool tied)
{
    ModelConfig c;
    c.contextLength = 16;
    c.width = width;
    c.layers = layers;
    c.heads = heads;
    c.tiedHead = tied;
    return c;
}

} // namespace

class tst_Gpt : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void parameterCountMatchesClosedForm_data();
    void parameterCountMatchesClosedForm();
    void attentionIsCausal();
    void gradientAccumulationEqualsTheLargeBatch();
};

void tst_Gpt::parameterCountMatchesClosedForm_data()
{
    QTest::addColumn<int>("width");
    QTest::addColumn<int>("layers");
    QTest::addColumn<int>("heads");
    QTest::addColumn<bool>("tied");
    QTest::newRow("tiny tied") << 16 << 1 << 1 << true;
    QTest::newRow("tiny untied") << 16 << 1 << 2 << false;
    QTest::newRow("smoke") << 32 << 2 << 2 << true;
    QTest::newRow("default shape") << 256 << 4 << 4 << true;
    QTest::newRow("deep untied") << 48 << 6 << 3 << false;
}

void tst_Gpt::parameterCountMatchesClosedForm()
{
    QFETCH(int, width);
    QFETCH(int, layers);
    QFETCH(int, heads);
    QFETCH(bool, tied);
    const ModelConfig config = small(width, layers, heads, tied);
    GPT model(GPTOptions::from(config));
    QCOMPARE(model->parameterCount(), parameterCount(config));
    // Tensor by tensor, in the order data-parallel ranks bucket and shard them.
    std::vector<int64_t> sizes;
    for (const auto &p : model->parameters())
        sizes.push_back(p.numel());
    QCOMPARE(sizes, parameterSizes(config));
}

void tst_Gpt::attentionIsCausal()
{
    torch::manual_seed(3);
    GPT model(GPTOptions::from(small(32, 2, 2, true)));
    model->eval();
    at::Tensor tokens = at::randint(0, 256, {1, 16}, at::kLong);
    at::Tensor changed = tokens.clone();
    changed[0][10] = (changed[0][10].item<int64_t>() + 1) % 256;
    compat::GradDisabledGuard noGrad;
    at::Tensor a = model->forward(tokens), b = model->forward(changed);
    // Positions before the change see the same past; from it on they differ.
    QVERIFY(at::equal(a.slice(1, 0, 10), b.slice(1, 0, 10)));
    QVERIFY(!at::allclose(a.slice(1, 10, 11), b.slice(1, 10, 11)));
}

void tst_Gpt::gradientAccumulationEqualsTheLargeBatch()
{
    torch::manual_seed(11);
    GPT model(GPTOptions::from(small(32, 2, 2, false)));
    at::Tensor inputs = at::randint(0, 256, {8, 16}, at::kLong);
    at::Tensor targets = at::randint(0, 256, {8, 16}, at::kLong);

    const auto gradients = [&model] {
        std::vector<at::Tensor> g;
        for (const auto &p : model->parameters())
            g.push_back(p.grad().clone());
        return g;
    };
    const double large = accumulateGradients(*model, {{inputs, targets}}).item<double>();
    const auto expected = gradients();
    const double accumulated = accumulateGradients(*model, {{inputs.slice(0, 0, 4), targets.slice(0, 0, 4)},
                                                            {inputs.slice(0, 4, 8), targets.slice(0, 4, 8)}})
                                   .item<double>();
    const auto actual = gradients();

    QVERIFY(std::fabs(large - accumulated) < 1e-6);
    double worst = 0;
    for (size_t i = 0; i < expected.size(); ++i)
        worst = std::max(worst, (expected[i] - actual[i]).abs().max().item<double>());
    QVERIFY2(worst < 1e-5, qPrintable(QString("largest gradient difference %1").arg(worst)));
    QVERIFY(expected.front().abs().sum().item<double>() > 0); // the comparison is not of zeros
}

QTEST_APPLESS_MAIN(tst_Gpt)
#include "tst_gpt.moc"
