// SPDX-License-Identifier: MIT
#include "core/config/config.h"
#include "core/memorymodel/memorymodel.h"
#include "core/memorymodel/modelshape.h"
#include "core/memorymodel/shardlayout.h"

#include <QtTest>
#include <numeric>
#include <random>

using namespace optlog;

namespace {

RunConfig tiny(const std::vector<std::string> &overrides = {})
{
    // B = 1, T = 2, C = 4, H = 1, V = 256, L = 1: small enough to count by hand.
    std::vector<std::string> all = {"model.context_length=2", "model.width=4",      "model.heads=1",
                                    "model.layers=1",         "train.microbatch=1", "train.steps=10"};
    all.insert(all.end(), overrides.begin(), overrides.end());
    return loadRunConfig("", "", all);
}

int64_t role(const MemoryEstimate &e, const std::string &name)
{
    const RoleEstimate *found = e.find(*memoryRoleNamed(name));
    return found ? found->bytes : -1;
}

} // namespace

class tst_MemoryModel : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void modelStateByMode_data();
    void modelStateByMode();
    void savedActivationsOfATinyModelByHand();
    void checkpointingKeepsOnlyBlockOutputs();
    void chunkedAttentionDropsTheQuadraticTerm();
    void autocastHalvesMatmulActivationsButKeepsWeightCasts();
    void predictedRowsAreTheEstimateAndItsPeak();
    void zeroShardsStateByStage();
    void shardLayoutCoversEveryElementOnce_data();
    void shardLayoutCoversEveryElementOnce();
    void shardLayoutByHand();
    void eachRankIsPredictedFromItsShard();
    void quantizedWeightRows();
    void sizesParse_data();
    void sizesParse();
};

void tst_MemoryModel::modelStateByMode_data()
{
    QTest::addColumn<QString>("mode");
    QTest::addColumn<int>("bytesPerParameter");
    QTest::addColumn<bool>("master");
    QTest::newRow("fp32") << "fp32" << 16 << false;
    QTest::newRow("autocast-bf16") << "autocast-bf16" << 16 << false;
    QTest::newRow("master-bf16") << "master-bf16" << 16 << true;
    QTest::newRow("pure-bf16") << "pure-bf16" << 8 << false;
}

void tst_MemoryModel::modelStateByMode()
{
    QFETCH(QString, mode);
    QFETCH(int, bytesPerParameter);
    QFETCH(bool, master);
    const RunConfig c = tiny({"precision.mode=" + mode.toStdString()});
    const MemoryEstimate e = estimateMemory(c);
    const int64_t n = parameterCount(c.model);
    int64_t modelState = 0;
    for (const std::string r : {"parameters", "gradients", "master_weights", "optimizer_state"})
        modelState += std::max<int64_t>(0, role(e, r));
    QCOMPARE(modelState, bytesPerParameter * n);
    QCOMPARE(role(e, "master_weights") >= 0, master);
    QCOMPARE(e.peakBytes, modelState + role(e, "saved_activations") + role(e, "temporaries"));
}

void tst_MemoryModel::savedActivationsOfATinyModelByHand()
{
    // FP32, B=1, T=2, C=4, H=1, V=256, L=1, naive attention, no dropout. In bytes:
    //   block: LayerNorm stats 2 x (2 x 2 x 4) = 32; LN1 output 8 x 4 = 32; Q, K, V copies 3 x 32 = 96;
    //          softmax 1x1x2x2 x 4 = 16 (the causal mask is added in place: nothing kept);
    //          attention output 32; residual 32; LN2 output 32;
    //          GELU input 4 x 32 = 128; GELU output 128; block output 32          -> 560
    //   positions 2 x 8 = 16; embedding sum 32; final LN stats 16; final LN output 32;
    //   log-softmax output 2 x 256 x 4 = 2048                                    -> 2144
    QCOMPARE(role(estimateMemory(tiny()), "saved_activations"), int64_t(560 + 2144));
}

void tst_MemoryModel::checkpointingKeepsOnlyBlockOutputs()
{
    const RunConfig plain = tiny({"model.layers=4", "model.context_length=64", "model.width=64"});
    const RunConfig every = tiny(
        {"model.layers=4", "model.context_length=64", "model.width=64", "memory.checkpoint_every=1"});
    const RunConfig second = tiny(
        {"model.layers=4", "model.context_length=64", "model.width=64", "memory.checkpoint_every=2"});
    const int64_t a = role(estimateMemory(plain), "saved_activations");
    const int64_t b = role(estimateMemory(every), "saved_activations");
    const int64_t c = role(estimateMemory(second), "saved_activations");
    QVERIFY(b < c && c < a);
    // A checkpointed block keeps its output (64 x 64 x 4 bytes) and the generator state.
    QCOMPARE(a - c, 2 * ((a - b) / 4));
}

void tst_MemoryModel::chunkedAttentionDropsTheQuadraticTerm()
{
    const auto attentionTerm = [](const std::string &attention, int64_t T) {
        const RunConfig c = tiny({"model.context_length=" + std::to_string(T), "model.width=32", "model.heads=4",
                                  "memory.attention=" + attention, "memory.attention_chunk=16"});
        return role(estimateMemory(c), "saved_activations");
    };
    // Doubling T doubles the linear terms; the naive quadratic term makes it more than double.
    const double naiveGrowth = double(attentionTerm("naive", 512)) / double(attentionTerm("naive", 256));
    const double chunkedGrowth = double(attentionTerm("chunked", 512)) / double(attentionTerm("chunked", 256));
    QVERIFY2(naiveGrowth > 2.5, qPrintable(QString::number(naiveGrowth)));
    QVERIFY2(chunkedGrowth < 2.1, qPrintable(QString::number(chunkedGrowth)));
}

void tst_MemoryModel::autocastHalvesMatmulActivationsButKeepsWeightCasts()
{
    const RunConfig fp32 = tiny({"model.context_length=128", "model.width=64", "train.microbatch=8"});
    const RunConfig bf16 = tiny(
        {"model.context_length=128", "model.width=64", "train.microbatch=8", "precision.mode=autocast-bf16"});
    const int64_t a = role(estimateMemory(fp32), "saved_activations");
    const int64_t b = role(estimateMemory(bf16), "saved_activations");
    QVERIFY(b < a);
    QVERIFY(b > a / 2); // the residual stream and the log-softmax stay FP32, and the weight casts add
}

void tst_MemoryModel::predictedRowsAreTheEstimateAndItsPeak()
{
    const MemoryEstimate e = estimateMemory(loadRunConfig("smoke", "", {"precision.mode=\"master-bf16\""}));
    const std::vector<MemoryRow> rows = e.rows();
    QCOMPARE(rows.size(), e.roles.size() + 1);
    int64_t parts = 0;
    for (size_t i = 0; i < e.roles.size(); ++i) {
        QCOMPARE(rows[i].role, e.roles[i].role);
        QCOMPARE(rows[i].dtype, e.roles[i].dtype);
        QCOMPARE(rows[i].bytes, e.roles[i].bytes);
        parts += rows[i].bytes;
    }
    QCOMPARE(rows.back().role, MemoryRole::Peak);
    QCOMPARE(rows.back().bytes, parts);
    for (const auto &row : rows)
        QCOMPARE(row.source, MemorySource::Predicted);
}

void tst_MemoryModel::zeroShardsStateByStage()
{
    const RunConfig c = tiny({"model.width=64"});
    const int64_t n = parameterCount(c.model);
    const auto stages = zeroSharding(c, 4);
    QCOMPARE(stages[0].bytesPerRank, 16 * n);
    QCOMPARE(stages[1].bytesPerRank, 8 * n + (8 * n + 3) / 4);
    QCOMPARE(stages[2].bytesPerRank, 4 * n + (4 * n + 3) / 4 + (8 * n + 3) / 4);
    QCOMPARE(stages[3].bytesPerRank, (4 * n + 3) / 4 + (4 * n + 3) / 4 + (8 * n + 3) / 4);
}

void tst_MemoryModel::quantizedWeightRows()
{
    const RunConfig c = tiny({"model.width=64"});
    const int64_t n = parameterCount(c.model);
    const auto rows = optlog::quantizedWeightRows(c.model, 128);
    QCOMPARE(rows.size(), size_t(2));
    QVERIFY(rows[0].bytes >= n && rows[0].bytes < n + 1024); // one byte a weight
    QCOMPARE(rows[1].bytes, n / 2 + 2 * ((n + 127) / 128));  // half a byte, and a scale per group
    QVERIFY(QString::fromStdString(rows[1].note).contains("estimate"));
}

void tst_MemoryModel::sizesParse_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<qint64>("bytes");
    QTest::newRow("MiB") << "512MiB" << qint64(512) * 1024 * 1024;
    QTest::newRow("GiB fraction") << "1.5GiB" << qint64(3) * 512 * 1024 * 1024;
    QTest::newRow("MB") << "300MB" << qint64(300000000);
    QTest::newRow("bytes") << "1000000" << qint64(1000000);
    QTest::newRow("space") << "64 KiB" << qint64(65536);
    QTest::newRow("bad unit") << "5apples" << qint64(-1);
    QTest::newRow("negative") << "-1MiB" << qint64(-1);
    // Sizes that would convert to no budget at all, while the run claimed one.
    QTest::newRow("infinite") << "infGiB" << qint64(-1);
    QTest::newRow("not a number") << "nanMiB" << qint64(-1);
    QTest::newRow("below a byte") << "0.5B" << qint64(-1);
    QTest::newRow("past 64 bits") << "1e30GiB" << qint64(-1);
}

void tst_MemoryModel::sizesParse()
{
    QFETCH(QString, text);
    QFETCH(qint64, bytes);
    try {
        QCOMPARE(qint64(parseBytes(text.toStdString(), "memory.budget")), bytes);
    } catch (const ConfigError &e) {
        QCOMPARE(bytes, qint64(-1));
        QVERIFY(QString(e.what()).contains("expected a positive size such as 512MiB"));
    }
}

void tst_MemoryModel::shardLayoutCoversEveryElementOnce_data()
{
    QTest::addColumn<int>("ranks");
    QTest::addColumn<int>("bucket");
    for (int ranks : {1, 2, 3, 4, 7})
        for (int bucket : {1, 50, 1000, 100000})
            QTest::addRow("%d ranks, buckets of %d", ranks, bucket) << ranks << bucket;
}

void tst_MemoryModel::shardLayoutCoversEveryElementOnce()
{
    QFETCH(int, ranks);
    QFETCH(int, bucket);
    std::mt19937 random(uint32_t(ranks * 7919 + bucket));
    std::vector<int64_t> sizes;
    for (int i = 0; i < 40; ++i)
        sizes.push_back(1 + int64_t(random() % 700));
    const ShardLayout layout = shardLayout(sizes, ranks, bucket);
    // Every element of every parameter is in exactly one rank's piece.
    std::vector<std::vector<int>> owners(sizes.size());
    for (size_t p = 0; p < sizes.size(); ++p)
        owners[p].assign(size_t(sizes[p]), 0);
    int64_t total = 0;
    for (int rank = 0; rank < ranks; ++rank) {
        for (const auto &piece : layout.piecesOf(rank)) {
            QVERIFY(piece.length > 0 && piece.offset + piece.length <= sizes[size_t(piece.parameter)]);
            const int64_t part = layout.partElements(piece.bucket);
            // Inside the rank's part of its bucket.
            QVERIFY(piece.bucketOffset >= rank * part && piece.bucketOffset + piece.length <= (rank + 1) * part);
            for (int64_t e = piece.offset; e < piece.offset + piece.length; ++e)
                owners[size_t(piece.parameter)][size_t(e)] += 1;
        }
        total += layout.shardElements(rank);
    }
    for (const auto &parameter : owners)
        for (int count : parameter)
            QCOMPARE(count, 1);
    QCOMPARE(total, std::accumulate(sizes.begin(), sizes.end(), int64_t(0)));
    // Buckets hold whole parameters, at most `bucket` elements unless one parameter is larger.
    for (const auto &b : layout.buckets) {
        QVERIFY(b.elements <= bucket || b.endParameter - b.firstParameter == 1);
        QCOMPARE(b.paddedElements % ranks, 0);
        QVERIFY(b.paddedElements - b.elements < ranks);
    }
    // The ranks' shards differ by at most each bucket's padding (under one element per rank).
    for (int rank = 1; rank < ranks; ++rank)
        QVERIFY(layout.shardElements(0) - layout.shardElements(rank)
                <= int64_t(layout.buckets.size()) * int64_t(ranks - 1));
}

void tst_MemoryModel::shardLayoutByHand()
{
    // Parameters of 10, 3 and 7 elements in buckets of 12 over 2 ranks: {10} and {3, 7}.
    const ShardLayout layout = shardLayout({10, 3, 7}, 2, 12);
    QCOMPARE(layout.buckets.size(), size_t(2));
    const auto rank0 = layout.piecesOf(0), rank1 = layout.piecesOf(1);
    QCOMPARE(rank0.size(), size_t(3));
    QCOMPARE(rank0[0].parameter, int64_t(0)); // the first half of the first parameter
    QCOMPARE(rank0[0].length, int64_t(5));
    QCOMPARE(rank0[1].parameter, int64_t(1)); // all of the second
    QCOMPARE(rank0[1].length, int64_t(3));
    QCOMPARE(rank0[2].parameter, int64_t(2)); // and the first two of the third
    QCOMPARE(rank0[2].offset, int64_t(0));
    QCOMPARE(rank0[2].length, int64_t(2));
    QCOMPARE(rank1.size(), size_t(2));
    QCOMPARE(rank1[1].parameter, int64_t(2));
    QCOMPARE(rank1[1].offset, int64_t(2));
    QCOMPARE(rank1[1].length, int64_t(5));
    // 5 elements over 4 ranks: padded to 8, parts of 2; the last rank owns padding only.
    const ShardLayout padded = shardLayout({5}, 4, 100);
    QCOMPARE(padded.shardElements(0), int64_t(2));
    QCOMPARE(padded.shardElements(2), int64_t(1));
    QCOMPARE(padded.shardElements(3), int64_t(0));
}

void tst_MemoryModel::eachRankIsPredictedFromItsShard()
{
    RunConfig config;
    config.precision.mode = "master-bf16";
    config.distributed.ranks = 3;
    config.distributed.bucketMib = 1;
    const int64_t n = parameterCount(config.model);
    const ShardLayout layout = shardLayoutOf(config);
    const auto bytes = [](const MemoryEstimate &e, MemoryRole role) { return e.find(role) ? e.find(role)->bytes : -1; };
    // Plain data parallel: every state whole, plus one FP32 bucket of at most 1 MiB (or the largest parameter).
    const MemoryEstimate plain = estimateMemory(config);
    QCOMPARE(bytes(plain, MemoryRole::OptimizerState), 8 * n);
    QCOMPARE(bytes(plain, MemoryRole::CommunicationBuffers), 4 * layout.largestBucket());
    int64_t moments = 0, masters = 0, gradients = 0;
    for (int64_t stage : {1, 2}) {
        config.distributed.zeroStage = stage;
        for (int64_t rank = 0; rank < 3; ++rank) {
            const MemoryEstimate e = estimateMemory(config, rank);
            QCOMPARE(bytes(e, MemoryRole::OptimizerState), 8 * layout.shardElements(rank));
            QCOMPARE(bytes(e, MemoryRole::MasterWeights), 4 * layout.shardElements(rank));
            QCOMPARE(bytes(e, MemoryRole::Gradients), stage == 2 ? 2 * layout.shardElements(rank) : 2 * n);
            QCOMPARE(bytes(e, MemoryRole::CommunicationBuffers), 4 * (layout.largestBucket() + layout.largestPart()));
            if (stage == 2) {
                moments += bytes(e, MemoryRole::OptimizerState);
                masters += bytes(e, MemoryRole::MasterWeights);
                gradients += bytes(e, MemoryRole::Gradients);
            }
        }
    }
    // The shards add up to the whole.
    QCOMPARE(moments, 8 * n);
    QCOMPARE(masters, 4 * n);
    QCOMPARE(gradients, 2 * n);
}

QTEST_APPLESS_MAIN(tst_MemoryModel)
#include "tst_memorymodel.moc"
