// SPDX-License-Identifier: MIT
// The precision table: its rows hold together, and the page that shows it is generated from it.
#include "core/contract/dtype.h"
#include "core/contract/precisionmodes.h"
#include "tests/common/generateddocs.h"
#include "tests/common/testpaths.h"

#include <QtTest>

using namespace optlog;

class tst_PrecisionModes : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void modelStateBytesPerParameter_data()
    {
        // Adam in FP32 costs 16 bytes a parameter, classic mixed precision too (2 + 2 + 4 + 8; ZeRO,
        // Rajbhandari et al.), pure BF16 half of it.
        QTest::addColumn<QString>("mode");
        QTest::addColumn<int>("bytes");
        QTest::newRow("fp32") << "fp32" << 16;
        QTest::newRow("autocast-bf16") << "autocast-bf16" << 16;
        QTest::newRow("autocast-fp16") << "autocast-fp16" << 16;
        QTest::newRow("master-bf16") << "master-bf16" << 16;
        QTest::newRow("master-fp16") << "master-fp16" << 16;
        QTest::newRow("pure-bf16") << "pure-bf16" << 8;
    }
    void modelStateBytesPerParameter()
    {
        QFETCH(QString, mode);
        QFETCH(int, bytes);
        const PrecisionMode *row = findPrecisionMode(mode.toStdString());
        QVERIFY(row);
        QCOMPARE(row->modelStateBytesPerParameter(), int64_t(bytes));
    }

    void everyRowHoldsTogether()
    {
        QVERIFY(!precisionModes().empty());
        for (const PrecisionMode &mode : precisionModes()) {
            const QByteArray name = QByteArray::fromStdString(mode.name);
            const bool anyFp16 = mode.weights == Dtype::Float16 || mode.compute == Dtype::Float16;
            // Without autocast every op runs in the weights' dtype.
            QVERIFY2(mode.autocast || mode.compute == mode.weights, name);
            // FP16's narrow range needs the scaler, and LibTorch 1.13's CPU has no FP16 kernels.
            QVERIFY2(mode.lossScaling == anyFp16, name);
            QVERIFY2(mode.cudaOnly == anyFp16, name);
            // Master weights are a wider copy of 16-bit weights.
            QVERIFY2(!mode.masterWeights || dtypeBytes(*mode.masterWeights) > dtypeBytes(mode.weights), name);
            QCOMPARE(mode.gradients, mode.weights);
            QCOMPARE(findPrecisionMode(mode.name), &mode);
        }
        QVERIFY(!findPrecisionMode("fp8"));
        QVERIFY(!findPrecisionMode(""));
    }

    void statesHaveKeysAndLabels()
    {
        QCOMPARE(QString(precisionStateKey(PrecisionState::MasterWeights)), QStringLiteral("master_weights"));
        QCOMPARE(QString(precisionStateLabel(PrecisionState::OptimizerState)), QStringLiteral("Adam m, v"));
        const PrecisionMode &fp32 = *findPrecisionMode("fp32");
        QVERIFY(!fp32.dtypeOf(PrecisionState::MasterWeights));
        QCOMPARE(*findPrecisionMode("master-bf16")->dtypeOf(PrecisionState::MasterWeights), Dtype::Float32);
    }

    void dtypeNames()
    {
        QCOMPARE(QString(dtypeName(Dtype::BFloat16)), QStringLiteral("bfloat16"));
        QCOMPARE(QString(shortDtypeName(Dtype::Float16)), QStringLiteral("fp16"));
        QCOMPARE(QString::fromStdString(shortDtype("float32")), QStringLiteral("fp32"));
        QCOMPARE(QString::fromStdString(shortDtype("mixed")), QStringLiteral("mixed"));
        QCOMPARE(dtypeBytes(Dtype::Float32), 4);
    }

    // docs/techniques.md shows the table as precisionTableMarkdown() writes it.
    void documentedTableIsGeneratedFromTheTable()
    {
        testing::expectGeneratedSection(optlog::testing::sourcePath(QStringLiteral("docs/techniques.md")),
                                        QStringLiteral("precisionTableMarkdown()"),
                                        QString::fromStdString(precisionTableMarkdown()));
    }
};

QTEST_APPLESS_MAIN(tst_PrecisionModes)
#include "tst_precisionmodes.moc"
