// SPDX-License-Identifier: MIT
// Weight quantization against facts that do not come from the code under test: NF4's published
// codebook, the bytes a layout must take, and half a step as the largest rounding error.
#include "core/engine/quantization/quantize.h"

#include <ATen/ATen.h>

#include <QtTest>

using namespace optlog;

namespace {

// A matrix with the shapes quantization meets: normal weights, an outlier, an all-zero row and a
// row of one sign.
at::Tensor testMatrix(int64_t rows, int64_t columns, uint64_t seed)
{
    at::manual_seed(int64_t(seed));
    at::Tensor w = at::randn({rows, columns}) * 0.02;
    w[0][3] = 0.5;     // an outlier
    w[1].zero_();      // a row of zeros
    w[2] = w[2].abs(); // only positive
    return w;
}

} // namespace

class tst_Quantize : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void nf4CodebookIsTheNormalQuantilesOfQLoRA()
    {
        // The values published with QLoRA (bitsandbytes' NF4 table), rounded to float.
        const float published[16] = {-1.0f,
                                     -0.6961928009986877f,
                                     -0.5250730514526367f,
                                     -0.39491748809814453f,
                                     -0.28444138169288635f,
                                     -0.18477343022823334f,
                                     -0.09105003625154495f,
                                     0.0f,
                                     0.07958029955625534f,
                                     0.16093020141124725f,
                                     0.24611230194568634f,
                                     0.33791524171829224f,
                                     0.44070982933044434f,
                                     0.5626170039176941f,
                                     0.7229568362236023f,
                                     1.0f};
        for (int i = 0; i < 16; ++i)
            QVERIFY2(std::abs(nf4Codebook()[size_t(i)] - published[i]) < 1e-6, qPrintable(QString::number(i)));
    }

    void twoCodesPackIntoOneByte()
    {
        const at::Tensor codes = at::tensor({1, 2, 15, 0, 7, 8}, at::kByte);
        const at::Tensor packed = packNibbles(codes);
        QCOMPARE(packed.numel(), int64_t(3));
        QCOMPARE(packed[0].item<int>(), 0x21); // the first code in the low half
        QCOMPARE(packed[1].item<int>(), 0x0F);
        QCOMPARE(packed[2].item<int>(), 0x87);
        const at::Tensor random = at::randint(0, 16, {4096}, at::kByte);
        QVERIFY(unpackNibbles(packNibbles(random), 4096).equal(random));
    }

    void everyElementIsWithinHalfAStep_data()
    {
        QTest::addColumn<QString>("scheme");
        QTest::addColumn<int>("group");
        for (const char *scheme : {"int8", "int4", "int4-asym"})
            for (int group : {32, 64, 128})
                QTest::newRow(qPrintable(QString("%1 g%2").arg(scheme).arg(group))) << QString(scheme) << group;
    }
    void everyElementIsWithinHalfAStep()
    {
        QFETCH(QString, scheme);
        QFETCH(int, group);
        const QuantScheme s = *quantSchemeNamed(scheme.toStdString());
        const at::Tensor w = testMatrix(48, 256, 7);
        const QuantizedTensor q = quantizeWeight(w, s, group);
        const at::Tensor error = (dequantize(q) - w).abs();
        // One step is the group's scale, read back from the stored FP16 scales.
        const int64_t perScale = s == QuantScheme::Int8 ? 256 : group;
        const at::Tensor step = q.scales.to(at::kFloat).repeat_interleave(perScale).view({48, 256});
        QVERIFY2((error <= step * 0.5 * (1 + 1e-6)).all().item<bool>(),
                 qPrintable(QString("largest error %1 steps").arg((error / step).max().item<double>())));
        QCOMPARE(dequantize(q)[1].abs().max().item<double>(), 0.0); // a zero row stays zero
    }

    void nf4CodesAreTheNearestCodebookValue()
    {
        const at::Tensor w = testMatrix(16, 128, 11);
        const QuantizedTensor q = quantizeWeight(w, QuantScheme::Nf4, 64);
        const at::Tensor codes = unpackNibbles(q.codes, w.numel()).to(at::kLong).view({-1, 64});
        const at::Tensor scale = q.scales.to(at::kFloat).view({-1, 1});
        const at::Tensor normalised = w.view({-1, 64}) / scale;
        const auto &book = nf4Codebook();
        const at::Tensor codebook = at::tensor(std::vector<float>(book.begin(), book.end()));
        // The nearest value by brute force over all 16, against the code the quantizer chose.
        const at::Tensor distances = (normalised.unsqueeze(-1) - codebook).abs();
        const at::Tensor nearest = std::get<0>(distances.min(-1));
        const at::Tensor chosen = distances.gather(-1, codes.unsqueeze(-1)).squeeze(-1);
        QVERIFY((chosen <= nearest + 1e-6).all().item<bool>());
        // Values that are codebook points times the scale come back exactly.
        const at::Tensor exact = codebook.repeat({8}).view({2, 64}) * 0.03;
        const QuantizedTensor e = quantizeWeight(exact, QuantScheme::Nf4, 64);
        QVERIFY(at::allclose(dequantize(e), exact, 0, 1e-3 * 0.03));
        QVERIFY(unpackNibbles(e.codes, 128).to(at::kLong).equal(at::arange(16).repeat({8})));
    }

    void bitsPerWeightAreTheBytesOfTheLayout_data()
    {
        QTest::addColumn<QString>("scheme");
        QTest::addColumn<int>("group");
        QTest::addColumn<double>("bits"); // per weight, from the layout alone
        QTest::newRow("int8 per row of 256") << "int8" << 0 << 8 + 16.0 / 256;
        QTest::newRow("int4 g32") << "int4" << 32 << 4 + 16.0 / 32;
        QTest::newRow("int4 g128") << "int4" << 128 << 4 + 16.0 / 128;
        QTest::newRow("int4-asym g64") << "int4-asym" << 64 << 4 + (16.0 + 8.0) / 64;
        QTest::newRow("nf4 g64") << "nf4" << 64 << 4 + 16.0 / 64;
    }
    void bitsPerWeightAreTheBytesOfTheLayout()
    {
        QFETCH(QString, scheme);
        QFETCH(int, group);
        QFETCH(double, bits);
        const at::Tensor w = testMatrix(32, 256, 3);
        const QuantizedTensor q = quantizeWeight(w, *quantSchemeNamed(scheme.toStdString()), group);
        const double measured = 8.0 * double(q.codeBytes() + q.scaleBytes() + q.zeroPointBytes()) / double(w.numel());
        QCOMPARE(measured, bits);
    }

    void groupsThatDoNotFitARowAreRefused()
    {
        const at::Tensor w = at::zeros({4, 96});
        QVERIFY(groupProblem(w, QuantScheme::Int4, 32).empty());
        QVERIFY(QString::fromStdString(groupProblem(w, QuantScheme::Int4, 48)).contains("not a power of two"));
        QVERIFY(QString::fromStdString(groupProblem(w, QuantScheme::Nf4, 128)).contains("larger than its rows of 96"));
        QVERIFY(QString::fromStdString(groupProblem(w, QuantScheme::Int4Asym, 64)).contains("do not divide"));
        QVERIFY(QString::fromStdString(groupProblem(w, QuantScheme::Int4, 0)).contains("not a power of two"));
        QVERIFY(groupProblem(w, QuantScheme::Int8, 48).empty()); // one scale per row: no group
        QVERIFY(QString::fromStdString(groupProblem(at::zeros({96}), QuantScheme::Int8, 0)).contains("not a matrix"));
    }
};

QTEST_GUILESS_MAIN(tst_Quantize)
#include "tst_quantize.moc"
