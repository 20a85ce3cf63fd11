// SPDX-License-Identifier: MIT
#include "core/config/config.h"
#include "core/memorymodel/devicecalibration.h"
#include "core/memorymodel/deviceterms.h"
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
    void cudaWorkspacesFollowLibTorch_data();
    void cudaWorkspacesFollowLibTorch();
    void cudaAutocastSavesSoftmaxInFp32();
    void cudaTermsEnterTheTemporariesAndAreNamed();
    void autoAttentionIsPredictedAsItResolves();
    void calibrationCorrectsAKnownOvercount();
    void calibrationLeavesAModelThatHolds();
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

void tst_MemoryModel::cudaWorkspacesFollowLibTorch_data()
{
    QTest::addColumn<QString>("capability");
    QTest::addColumn<QString>("workspaceConfig"); // CUBLAS_WORKSPACE_CONFIG; "-" unset
    QTest::addColumn<QString>("unified");         // TORCH_CUBLASLT_UNIFIED_WORKSPACE; "-" unset
    QTest::addColumn<qint64>("cublas");
    QTest::addColumn<qint64>("cublasLt");
    const qint64 MiB = 1024 * 1024, KiB = 1024;
    QTest::newRow("Hopper's default") << "9.0"
                                      << "-"
                                      << "-" << 32 * MiB << 1 * MiB;
    QTest::newRow("Ampere's default") << "8.0"
                                      << "-"
                                      << "-" << 4096 * KiB * 2 + 16 * KiB * 8 << 1 * MiB;
    QTest::newRow("Blackwell: not 9.0") << "10.0"
                                        << "-"
                                        << "-" << 4096 * KiB * 2 + 16 * KiB * 8 << 1 * MiB;
    QTest::newRow("the deterministic setting") << "9.0"
                                               << ":4096:8"
                                               << "-" << 32 * MiB << 1 * MiB;
    QTest::newRow("a small workspace caps cuBLASLt's") << "9.0"
                                                       << ":16:8"
                                                       << "-" << 128 * KiB << 128 * KiB;
    QTest::newRow("unified") << "9.0"
                             << "-"
                             << "1" << 32 * MiB << qint64(0);
    QTest::newRow("unreadable: the default") << "9.0"
                                             << "4096"
                                             << "-" << 32 * MiB << 1 * MiB;
}

void tst_MemoryModel::cudaWorkspacesFollowLibTorch()
{
    QFETCH(QString, capability);
    QFETCH(QString, workspaceConfig);
    QFETCH(QString, unified);
    QFETCH(qint64, cublas);
    QFETCH(qint64, cublasLt);
    const std::map<std::string, std::string> variables = {{"CUBLAS_WORKSPACE_CONFIG", workspaceConfig.toStdString()},
                                                          {"TORCH_CUBLASLT_UNIFIED_WORKSPACE", unified.toStdString()}};
    const EnvironmentLookup environment = [&variables](const std::string &name) -> std::optional<std::string> {
        const auto found = variables.find(name);
        return found == variables.end() || found->second == "-" ? std::nullopt
                                                                : std::optional<std::string>(found->second);
    };
    const DeviceTerms terms = cudaDeviceTerms(ComputeCapability::parse(capability.toStdString()), "a GPU", "2.11.0",
                                              environment);
    QCOMPARE(terms.cublasWorkspaceBytes, int64_t(cublas));
    QCOMPARE(terms.cublasLtWorkspaceBytes, int64_t(cublasLt));
    QCOMPARE(terms.workspaceBytes(), 2 * int64_t(cublas + cublasLt)); // the forward's handle and backward's
    QVERIFY(terms.unknown.empty());
    QCOMPARE(terms.allocationGranuleBytes, int64_t(512));
}

void tst_MemoryModel::cudaAutocastSavesSoftmaxInFp32()
{
    // The H200's seed-15m run (issue 59): autocast-bf16 saved 198 MiB more than the CPU's terms
    // predicted. CUDA's autocast runs softmax in FP32 and the second product saves a BF16 copy:
    // 4 more bytes per score, B·H·T² per layer.
    const RunConfig c = loadRunConfig("seed-15m", "", {"precision.mode=autocast-bf16"});
    const DeviceTerms cuda = cudaDeviceTerms(ComputeCapability{9, 0}, "NVIDIA H200", "2.11.0", processEnvironment());
    const DeviceTerms cpu = cpuDeviceTerms("a CPU", "2.11.0");
    const int64_t B = 16, H = 6, T = 256, L = 8;
    QCOMPARE(role(estimateMemory(c, cuda), "saved_activations") - role(estimateMemory(c, cpu), "saved_activations"),
             L * B * H * T * T * 4);
    // Without autocast the op lists do not matter: the same dtypes on both.
    for (const char *mode : {"fp32", "pure-bf16"}) {
        const RunConfig plain = loadRunConfig("seed-15m", "", {std::string("precision.mode=") + mode});
        QCOMPARE(role(estimateMemory(plain, cuda), "saved_activations"),
                 role(estimateMemory(plain, cpu), "saved_activations"));
    }
    // CUDA's fused dropout keeps a 1-byte mask where the CPU's keeps one in its input's dtype.
    const RunConfig dropout = loadRunConfig("seed-15m", "", {"model.dropout=0.1"});
    QVERIFY(role(estimateMemory(dropout, cuda), "saved_activations")
            < role(estimateMemory(dropout, cpu), "saved_activations"));
}

// memory.attention = "auto" is predicted as what it runs: SDPA on CUDA where LibTorch has it (no
// T x T matrix), the naive attention on the CPU and where it has none (1.x).
void tst_MemoryModel::autoAttentionIsPredictedAsItResolves()
{
    const auto peak = [](const std::string &attention, const std::string &device, bool hasSdpa) {
        const RunConfig c = loadRunConfig("gpt2-small", "",
                                          {"memory.attention=" + attention, "runtime.device=" + device,
                                           "precision.mode=autocast-bf16"});
        DeviceTerms terms = device == "cuda"
                                ? cudaDeviceTerms(ComputeCapability{9, 0}, "NVIDIA H200", "", processEnvironment())
                                : cpuDeviceTerms("a CPU", "");
        terms.hasSdpa = hasSdpa;
        return estimateMemory(c, terms).peakBytes;
    };
    QCOMPARE(peak("auto", "cuda", true), peak("sdpa", "cuda", true));
    QVERIFY(peak("auto", "cuda", true) < peak("naive", "cuda", true) / 2);
    QCOMPARE(peak("auto", "cuda", false), peak("naive", "cuda", false));
    QCOMPARE(peak("auto", "cpu", true), peak("naive", "cpu", true));
}

void tst_MemoryModel::cudaTermsEnterTheTemporariesAndAreNamed()
{
    const RunConfig c = loadRunConfig("default", "", {});
    const DeviceTerms cuda = cudaDeviceTerms(ComputeCapability{9, 0}, "NVIDIA H200", "2.11.0", processEnvironment());
    const MemoryEstimate onGpu = estimateMemory(c, cuda), onCpu = estimateMemory(c, cpuDeviceTerms("", ""));
    QCOMPARE(role(onGpu, "temporaries") - role(onCpu, "temporaries"),
             cuda.workspaceBytes() + onGpu.device.roundingBytes({}));
    QVERIFY(onGpu.find(MemoryRole::Temporaries)->note.find("cuBLAS workspaces") != std::string::npos);
    const std::string text = formatEstimate(c, onGpu, 8);
    QVERIFY2(text.find("compute capability 9.0") != std::string::npos, text.c_str());
    QVERIFY2(text.find("66.0 MiB") != std::string::npos, text.c_str());
    // No GPU here: the chip is not known, and the estimate says so rather than take the CPU's terms.
    RunConfig unknown = c;
    unknown.runtime.device = "cuda";
    const MemoryEstimate guessed = estimateMemory(unknown);
    QCOMPARE(guessed.device.autocastOps, AutocastOps::Cuda);
    QVERIFY(!guessed.device.unknown.empty());
    QVERIFY(formatEstimate(unknown, guessed, 8).find("not known here: which chip") != std::string::npos);
    // Rounding: blocks of 512 bytes.
    QCOMPARE(cuda.roundingBytes({1, 512, 513, 1536}), int64_t(511 + 0 + 511 + 0));
}

namespace {

// Probes of a device whose allocator counts `fraction` more than asked and holds `held` bytes:
// what the memory model predicts, and what such a device would measure.
std::vector<CalibrationProbe> overcountedProbes(double fraction, int64_t held)
{
    std::vector<CalibrationProbe> probes;
    for (const auto &[width, b, t] : kCalibrationShapes) {
        const RunConfig c = tiny({"model.width=" + std::to_string(width), "model.heads=4", "model.layers=2",
                                  "model.context_length=" + std::to_string(t), "train.microbatch=" + std::to_string(b)});
        const MemoryEstimate e = estimateMemory(c);
        CalibrationProbe p{width, b, t, 0, role(e, "saved_activations"), role(e, "temporaries"), e.peakBytes, 0, 0, 0};
        p.stateBytes = e.peakBytes - p.predictedSaved - p.predictedTemporaries;
        p.measuredSaved = std::llround(double(p.predictedSaved) * (1 + fraction));
        p.measuredPeak = std::llround(double(e.peakBytes) * (1 + fraction)) + held;
        p.measuredTemporaries = p.measuredPeak - p.stateBytes - p.measuredSaved;
        probes.push_back(p);
    }
    return probes;
}

} // namespace

void tst_MemoryModel::calibrationCorrectsAKnownOvercount()
{
    DeviceCalibration c;
    c.device = "a device";
    c.precisionMode = "fp32";
    c.probes = overcountedProbes(0.1, 8 << 20);
    c = fitCalibration(c);
    QVERIFY(c.applied);
    QVERIFY(c.heldOutErrorBefore > 0.1);
    QVERIFY2(c.heldOutErrorAfter < 0.001, c.describe().c_str());
    QVERIFY2(std::abs(c.saved.scale - 1.1) < 1e-6, c.describe().c_str());
    // A shape far from the probes: the default preset's, predicted as that device would measure it.
    const MemoryEstimate plain = estimateMemory(loadRunConfig("default", "", {})), corrected = calibrated(plain, c);
    const double measured = double(plain.peakBytes) * 1.1 + double(8 << 20);
    QVERIFY2(std::abs(double(corrected.peakBytes) - measured) / measured < 0.001, corrected.calibration.c_str());
    QVERIFY(corrected.calibration.find("calibrated on a device, fp32: 7 probes") == 0);
}

void tst_MemoryModel::calibrationLeavesAModelThatHolds()
{
    DeviceCalibration c;
    c.device = "a device";
    c.precisionMode = "fp32";
    c.probes = overcountedProbes(0, 0);
    c = fitCalibration(c);
    QVERIFY(!c.applied);
    const MemoryEstimate plain = estimateMemory(loadRunConfig("default", "", {}));
    QCOMPARE(calibrated(plain, c).peakBytes, plain.peakBytes);
    QVERIFY(calibrated(plain, c).calibration.find("checked on a device") == 0);
}

QTEST_APPLESS_MAIN(tst_MemoryModel)
#include "tst_memorymodel.moc"
