// SPDX-License-Identifier: MIT
// `optlog record`'s reader: a run its own trainer reports as JSON-lines events (docs/events.md)
// becomes a run of the study, written through the engine's recorder. Each stream comes through a
// real pipe into a real study file; a refused line names its number and keeps the rows before it.
#include "core/analysis/runsummary.h"
#include "core/config/cachefile.h"
#include "core/engine/machine/calibration.h"
#include "core/recording/recordedstream.h"
#include "core/store/store.h"

#include <nlohmann/json.hpp>

#include <QtTest>
#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>

#include <unistd.h>

using namespace optlog;

namespace {

const std::string kStart = R"({"event":"started","format":1,"name":"mine","group":"g","steps":3,)"
                           R"("config":{"train":{"lr":0.001},"amp":"bf16","layers":[1,2],"resume":null},)"
                           R"("environment":{"torch":"1.13.1"},"recorder":"a test"})";

std::string stepLine(int64_t step, int64_t tokens, const std::string &loss = "4.5")
{
    return R"({"event":"step","step":)" + std::to_string(step) + R"(,"tokens":)" + std::to_string(tokens)
           + R"(,"train_loss":)" + loss + R"(,"step_seconds":0.5,"tokens_per_second":200})";
}

// The bytes written into a pipe by a thread (so that a stream larger than the pipe's buffer
// does not block), with the write end closed after them unless `keepOpen`.
class Writer
{
public:
    Writer()
    {
        if (::pipe(m_fds) != 0)
            qFatal("pipe");
    }
    ~Writer()
    {
        if (m_thread.joinable())
            m_thread.join();
        closeWrite();
        ::close(m_fds[0]);
    }
    int readEnd() const { return m_fds[0]; }
    void write(const std::string &bytes)
    {
        size_t done = 0;
        while (done < bytes.size()) {
            const ssize_t n = ::write(m_fds[1], bytes.data() + done, bytes.size() - done);
            if (n <= 0)
                return; // the reader stopped: a refused stream
            done += size_t(n);
        }
    }
    void writeInBackground(std::string bytes)
    {
        m_thread = std::thread([this, bytes = std::move(bytes)] {
            write(bytes);
            closeWrite();
        });
    }
    void closeWrite()
    {
        if (m_fds[1] >= 0)
            ::close(std::exchange(m_fds[1], -1));
    }

private:
    int m_fds[2] = {-1, -1};
    std::thread m_thread;
};

RecordedStream recordLines(Store &store, const std::vector<std::string> &lines)
{
    std::string bytes;
    for (const auto &line : lines)
        bytes += line + "\n";
    Writer writer;
    writer.writeInBackground(bytes);
    return recordStream(store, writer.readEnd(), recordedMatmulPeak);
}

bool mentions(const std::string &text, const std::string &part)
{
    return text.find(part) != std::string::npos;
}

} // namespace

class tst_RecordedStream : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init() { QVERIFY(m_dir.isValid()); }

    void aWholeStreamIsARun()
    {
        Store store(path("whole.sqlite"));
        const RecordedStream recorded = recordLines(
            store, {kStart, stepLine(0, 100), stepLine(1, 200),
                    R"({"event":"validation","step":1,"tokens":200,"val_loss":4.0,"sequences":8,"sequence_sd":0.5})",
                    R"({"event":"memory","rows":[{"role":"parameters","dtype":"float32","bytes":4096},)"
                    R"({"role":"peak","bytes":9000}],"dtypes":{"weights":"float32"},"peak_measure":"the profiler"})",
                    R"({"event":"note","message":"hello","step":1})", R"({"event":"finished","outcome":"completed"})"});
        QVERIFY2(!recorded.refused, recorded.message.c_str());
        QCOMPARE(recorded.outcome, Outcome::Completed);
        const RunRecord run = store.requireRun(recorded.runId);
        QCOMPARE(run.name, std::string("mine"));
        QCOMPARE(run.group, std::string("g"));
        QCOMPARE(run.outcome, std::optional(Outcome::Completed));
        QCOMPARE(run.outcomeStep, int64_t(1)); // the last step, as the stream left it out
        // The trainer's keys, flattened; null left out.
        QVERIFY2(mentions(run.configToml, "amp = 'bf16'") || mentions(run.configToml, "amp = \"bf16\""),
                 run.configToml.c_str());
        QVERIFY2(mentions(run.configToml, "lr = 0.001") && !mentions(run.configToml, "resume"), run.configToml.c_str());
        QVERIFY2(mentions(run.environmentJson, R"("recorder":"a test")"), run.environmentJson.c_str());
        QVERIFY2(mentions(run.environmentJson, R"("peak_measure":"the profiler")"), run.environmentJson.c_str());
        QVERIFY2(mentions(run.environmentJson, R"("planned_steps":3)"), run.environmentJson.c_str());
        QCOMPARE(run.dtypesJson, std::string(R"({"weights":"float32"})"));
        QCOMPARE(store.metrics(run.id).size(), size_t(2));
        QCOMPARE(store.metrics(run.id).back().tokens, int64_t(200));
        QCOMPARE(store.validation(run.id).size(), size_t(1));
        QCOMPARE(store.validation(run.id).front().sequences, int64_t(8));
        const std::vector<MemoryRow> memory = store.memory(run.id);
        QCOMPARE(memory.size(), size_t(2));
        QCOMPARE(memory.front().bytes, int64_t(4096));
        bool noted = false;
        for (const auto &event : store.events(run.id))
            noted = noted || (event.kind == EventKind::Note && event.message == "hello" && event.step == 1);
        QVERIFY(noted);
    }

    // A trainer that names its GPT in engine config keys gets the memory model's prediction,
    // stored before its first step and kept beside what it measures.
    void aNamedGptIsPredicted()
    {
        Store store(path("predicted.sqlite"));
        const std::string start = R"({"event":"started","name":"p","engine_config":{"model.width":32,"model.layers":2,)"
                                  R"("model.heads":2,"model.context_length":32,"precision.mode":"autocast-bf16"}})";
        const RecordedStream recorded
            = recordLines(store, {start, stepLine(0, 100),
                                  R"({"event":"memory","rows":[{"role":"parameters","dtype":"float32","bytes":4096}]})",
                                  R"({"event":"finished","outcome":"completed"})"});
        QVERIFY2(!recorded.refused, recorded.message.c_str());
        int64_t predictedParameters = 0, measuredRows = 0;
        for (const MemoryRow &row : store.memory(recorded.runId)) {
            if (row.source == MemorySource::Predicted && row.role == MemoryRole::Parameters)
                predictedParameters = row.bytes;
            measuredRows += row.source == MemorySource::Measured;
        }
        // Width 32, 2 layers, context 32, vocabulary 256, tied head: 34,688 FP32 parameters.
        QCOMPARE(predictedParameters, int64_t(34688 * 4));
        QCOMPARE(measuredRows, int64_t(1));
    }

    // A trainer on a GPU: the prediction takes CUDA's terms for the chip its environment names,
    // and the workspace variables it ran with (the Python module sends both). No raw strings here:
    // moc misreads one that ends in a quote.
    void aGpuRunIsPredictedForItsChip_data()
    {
        QTest::addColumn<QString>("environment");
        QTest::addColumn<qint64>("workspaces");
        const qint64 MiB = 1024 * 1024, ampere = 4096 * 1024 * 2 + 16 * 1024 * 8;
        QTest::newRow("an A100") << "{\"device\":\"cuda:0 (NVIDIA A100)\",\"cuda_capability\":\"8.0\"}"
                                 << 2 * (ampere + 1 * MiB);
        QTest::newRow("an H200, unified") << "{\"device\":\"cuda:0 (NVIDIA H200)\",\"cuda_capability\":\"9.0\","
                                             "\"variables\":{\"TORCH_CUBLASLT_UNIFIED_WORKSPACE\":\"1\"}}"
                                          << 2 * 32 * MiB;
        QTest::newRow("no chip named: Hopper's, the larger") << "{\"device\":\"cuda:0\"}" << 2 * 33 * MiB;
    }

    void aGpuRunIsPredictedForItsChip()
    {
        QFETCH(QString, environment);
        QFETCH(qint64, workspaces);
        const auto temporaries = [this](const std::string &device, const QString &environment) {
            Store store(path(QByteArray::fromStdString("gpu-" + device + "-" + std::to_string(qHash(environment)))
                             + ".sqlite"));
            const std::string start = "{\"event\":\"started\",\"name\":\"g\",\"environment\":"
                                      + environment.toStdString()
                                      + ",\"engine_config\":{\"model.width\":32,\"model.layers\":2,\"model.heads\":2,"
                                        "\"model.context_length\":32,\"runtime.device\":\""
                                      + device + "\"}}";
            const RecordedStream recorded = recordLines(store, {start, stepLine(0, 100),
                                                                "{\"event\":\"finished\",\"outcome\":\"completed\"}"});
            int64_t bytes = -1;
            for (const MemoryRow &row : store.memory(recorded.runId))
                if (row.source == MemorySource::Predicted && row.role == MemoryRole::Temporaries)
                    bytes = row.bytes;
            return bytes;
        };
        // The same GPT predicted for the CPU and for the GPU differs by the workspaces, and the
        // rounding of its model state's tensors to 512 bytes (under 512 bytes each of its
        // 4 x 29 parameters, gradients and AdamW's moments).
        const int64_t added = temporaries("cuda", environment) - temporaries("cpu", environment);
        QVERIFY2(added >= workspaces && added < workspaces + 4 * 29 * 512, std::to_string(added).c_str());
    }

    // The trainer was killed: its pipe ends without a finished event.
    void theEndWithoutFinishedIsACrash()
    {
        Store store(path("crash.sqlite"));
        const RecordedStream recorded = recordLines(store, {kStart, stepLine(0, 100), stepLine(1, 200)});
        QVERIFY(!recorded.refused);
        QCOMPARE(recorded.outcome, Outcome::Crashed);
        const RunRecord run = store.requireRun(recorded.runId);
        QCOMPARE(run.outcome, std::optional(Outcome::Crashed));
        QCOMPARE(run.outcomeStep, int64_t(1));
        QVERIFY2(mentions(run.message, "without a finished event"), run.message.c_str());
        QCOMPARE(store.metrics(run.id).size(), size_t(2));
    }

    void badLinesAreRefusedByNumber_data()
    {
        QTest::addColumn<QString>("line");
        QTest::addColumn<QString>("said");
        QTest::newRow("not JSON") << "OpenBLAS warning"
                                  << "line 3 of the event stream: not JSON";
        QTest::newRow("NaN is not JSON") << R"({"event":"step","step":1,"tokens":200,"train_loss":NaN})"
                                         << "line 3 of the event stream: not JSON";
        QTest::newRow("a step again") << QString::fromStdString(stepLine(0, 150))
                                      << "line 3 of the event stream: step 0 is not after step 0";
        QTest::newRow("tokens going back")
            << QString::fromStdString(stepLine(1, 50)) << "'tokens' is 50 at step 1, fewer than the 100 before it";
        QTest::newRow("a second start") << QString::fromStdString(kStart) << "a second started event";
        QTest::newRow("a bad memory row") << R"({"event":"memory","rows":[{"role":"weights","bytes":1}]})"
                                          << "line 3 of the event stream: 'rows' entry 1: 'role' is 'weights'";
    }
    void badLinesAreRefusedByNumber()
    {
        QFETCH(QString, line);
        QFETCH(QString, said);
        Store store(path((QTest::currentDataTag() + QStringLiteral(".sqlite")).toUtf8()));
        const RecordedStream recorded = recordLines(store,
                                                    {kStart, stepLine(0, 100), line.toStdString(), stepLine(5, 500)});
        QVERIFY(recorded.refused);
        QCOMPARE(recorded.outcome, Outcome::Failed);
        const RunRecord run = store.requireRun(recorded.runId);
        QCOMPARE(run.outcome, std::optional(Outcome::Failed)); // never left running
        QVERIFY2(mentions(run.message, said.toStdString()), run.message.c_str());
        QVERIFY2(mentions(run.message, "the rows before it are kept"), run.message.c_str());
        QCOMPARE(store.metrics(run.id).size(), size_t(1)); // the step before the bad line
    }

    // A 10 MB line is refused by its length, without holding all of it.
    void aHugeLineIsRefused()
    {
        Store store(path("huge.sqlite"));
        // Not a raw string: moc's lexer misreads one that ends in a quote.
        const std::string huge = "{\"event\":\"note\",\"message\":\"" + std::string(10 << 20, 'x') + "\"}";
        const RecordedStream recorded = recordLines(store, {kStart, huge, stepLine(0, 100)});
        QVERIFY(recorded.refused);
        QVERIFY2(mentions(recorded.message, "line 2 of the event stream is 10485")
                     && mentions(recorded.message, "1 MiB"),
                 recorded.message.c_str());
    }

    // Refused before the run exists: nothing is written, and what the study held stays.
    void aStartThatCannotBeARunWritesNothing_data()
    {
        QTest::addColumn<QString>("first");
        QTest::addColumn<QString>("said");
        QTest::newRow("empty stream") << QString() << "the event stream is empty";
        QTest::newRow("no start") << QString::fromStdString(stepLine(0, 1)) << "the first line must be a started event";
        QTest::newRow("no name") << R"({"event":"started"})"
                                 << "has no 'name'";
        QTest::newRow("name in use") << R"({"event":"started","name":"kept"})"
                                     << "already has a run named \"kept\"";
        QTest::newRow("a name of two lines") << "{\"event\":\"started\",\"name\":\"a\\nb\"}"
                                             << "one line of plain text";
        QTest::newRow("a key that is a value and a prefix")
            << R"({"event":"started","name":"n","config":{"a":1,"a.b":2}})"
            << "'a' holds a value and is also the prefix of 'a.b'";
        QTest::newRow("an array of objects") << R"({"event":"started","name":"n","config":{"opt":{"betas":[{}]}}})"
                                             << "'opt.betas' is an array holding object";
        QTest::newRow("an engine config the engine refuses")
            << R"({"event":"started","name":"n","engine_config":{"model":{"width":30,"heads":4}}})"
            << "engine_config: ";
        QTest::newRow("a newer format") << R"({"event":"started","format":9,"name":"n"})"
                                        << "event format 9";
        QTest::newRow("a 2 MiB first line")
            << QString(2 << 20, QLatin1Char('x')) << "line 1 of the event stream is 2097152 bytes long";
    }
    void aStartThatCannotBeARunWritesNothing()
    {
        QFETCH(QString, first);
        QFETCH(QString, said);
        Store store(path((QTest::currentDataTag() + QStringLiteral(".sqlite")).toUtf8()));
        const int64_t kept = store.createRun("kept", "");
        store.appendMetrics(kept, {StepMetrics{}});
        store.finishRun(kept, Outcome::Completed, 0, "");
        const std::vector<std::string> lines = first.isEmpty() ? std::vector<std::string>{}
                                                               : std::vector<std::string>{first.toStdString()};
        const RecordedStream recorded = recordLines(store, lines);
        QVERIFY(recorded.refused);
        QCOMPARE(recorded.runId, int64_t(0));
        QVERIFY2(mentions(recorded.message, said.toStdString()), recorded.message.c_str());
        QCOMPARE(store.runs().size(), size_t(1));
        QCOMPARE(store.metrics(kept).size(), size_t(1));
    }

    // A quiet trainer's steps reach the file within about a second, for a monitor to follow.
    void aQuietWriterIsFollowedLive()
    {
        const std::string study = path("live.sqlite");
        Store store(study);
        Writer writer;
        RecordedStream recorded;
        std::thread reader([&] { recorded = recordStream(store, writer.readEnd(), recordedMatmulPeak); });
        writer.write(kStart + "\n" + stepLine(0, 100) + "\n" + stepLine(1, 200) + "\n");
        const Store follower(study, Store::Access::ReadOnly);
        size_t seen = 0;
        for (int i = 0; i < 50 && seen < 2; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            const auto runs = follower.runs();
            seen = runs.empty() ? 0 : follower.metrics(runs.front().id).size();
            if (!runs.empty())
                QVERIFY(!runs.front().isFinished()); // running while the trainer trains
        }
        QCOMPARE(seen, size_t(2));
        writer.write(R"({"event":"finished","outcome":"cancelled","message":"KeyboardInterrupt"})"
                     "\n");
        writer.closeWrite();
        reader.join();
        QCOMPARE(recorded.outcome, Outcome::Cancelled);
    }

    // Two trainers record into one study at once, each through its own connection.
    void twoRecordersShareAStudy()
    {
        const std::string study = path("shared.sqlite");
        // Created first: two connections creating the same new study at once can meet "database
        // is locked" in the schema's creation (1 run in 4 of the 2.11 build here): a race of the
        // store's own, not of recording.
        {
            Store created(study);
        }
        std::vector<RecordedStream> results(2);
        std::vector<std::thread> threads;
        for (int i = 0; i < 2; ++i)
            threads.emplace_back([&, i] {
                Store store(study);
                std::vector<std::string> lines = {R"({"event":"started","name":"trainer )" + std::to_string(i)
                                                  + R"("})"};
                for (int step = 0; step < 300; ++step)
                    lines.push_back(stepLine(step, 100 * (step + 1)));
                lines.push_back(R"({"event":"finished","outcome":"completed"})");
                results[size_t(i)] = recordLines(store, lines);
            });
        for (auto &thread : threads)
            thread.join();
        const Store store(study, Store::Access::ReadOnly);
        for (const auto &result : results) {
            QVERIFY2(!result.refused && result.outcome == Outcome::Completed, result.message.c_str());
            QCOMPARE(store.metrics(result.runId).size(), size_t(300));
        }
    }

    // A non-finite loss is stored as unknown and found as the engine finds its own.
    void aNonFiniteLossIsFound()
    {
        Store store(path("nan.sqlite"));
        const RecordedStream recorded
            = recordLines(store,
                          {kStart, stepLine(0, 100), stepLine(1, 200, "null"),
                           R"({"event":"finished","outcome":"diverged","step":1,"message":"the loss was not finite"})"});
        QCOMPARE(recorded.outcome, Outcome::Diverged);
        bool found = false;
        for (const auto &event : store.events(recorded.runId))
            found = found || (event.kind == EventKind::NonFinite && event.step == 1);
        QVERIFY(found);
        QVERIFY(std::isnan(store.metrics(recorded.runId).back().trainLoss));
    }

    // A recorded run's MFU: the FLOPs per token its trainer gave, over the matmul peak the engine
    // cached for this machine at the trainer's threads, on PyTorch's own products (ATen's path).
    // Without a cached peak the run says what would measure one.
    void aRecordedRunHasItsMfu()
    {
        qputenv("XDG_CACHE_HOME", QByteArray::fromStdString(path("cache")));
        std::vector<std::string> lines = {
            R"({"event":"started","name":"lstm s1","environment":{"device_name":"cpu","intra_op_threads":2}})"};
        for (int64_t step = 0; step < 6; ++step)
            lines.push_back(stepLine(step, 100 * (step + 1))); // 200 tokens/s
        lines.push_back(R"({"event":"flops","per_token":1e6,"how":"given"})");
        lines.push_back(R"({"event":"finished","outcome":"completed"})");
        Store store(path("mfu.sqlite"));
        const RecordedStream uncached = recordLines(store, lines);
        QVERIFY2(mentions(uncached.peakAdvice, "`optlog tune --peak-only --threads 2` measures it"),
                 uncached.peakAdvice.c_str());
        QCOMPARE(summarize(store, store.requireRun(uncached.runId)).mfu(), 0.0);

        nlohmann::json cache;
        cache[matmulPeakKey({false, "", "", 2})] = {{"float32_gflops", 100.0},
                                                    {"bfloat16_gflops", 200.0},
                                                    {"path_gflops", {{"float32", {{"aten", 50.0}, {"sgemm", 100.0}}}}}};
        updateJsonCache(path("cache") + "/optlog/matmul-peak.json", [&](nlohmann::json &file) { file = cache; });
        lines.front()
            = R"({"event":"started","name":"lstm s2","environment":{"device_name":"cpu","intra_op_threads":2}})";
        const RecordedStream cached = recordLines(store, lines);
        qunsetenv("XDG_CACHE_HOME");
        QVERIFY2(cached.peakAdvice.empty(), cached.peakAdvice.c_str());
        const RunSummary s = summarize(store, store.requireRun(cached.runId));
        QCOMPARE(s.flopsHow, std::string("given"));
        QCOMPARE(s.peakPath, std::string("aten"));
        QCOMPARE(s.peakGflops, 50.0);
        QVERIFY2(std::fabs(s.mfu() - 1e6 * 200 / 1e9 / 50) < 1e-12, std::to_string(s.mfu()).c_str());
    }

private:
    std::string path(const QByteArray &name) const { return m_dir.filePath(QString::fromUtf8(name)).toStdString(); }

    QTemporaryDir m_dir;
};

QTEST_APPLESS_MAIN(tst_RecordedStream)
#include "tst_recordedstream.moc"
