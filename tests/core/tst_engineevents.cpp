// SPDX-License-Identifier: MIT
// The engine's JSON-lines events: the one writer and the one parser, line by line.
#include "core/contract/engineevents.h"

#include <QtTest>
#include <cmath>

using namespace optlog;

namespace {

QString number(double value)
{
    return std::isnan(value) ? QStringLiteral("nan") : QString::number(value, 'g', 10);
}

// Every field of an event, in words: two events are the same when their descriptions are.
QString describe(const EngineEvent &event)
{
    QString text = QStringLiteral("%1 run %2:").arg(QString(eventKindName(event.kind()))).arg(event.run);
    if (const auto *e = std::get_if<RunStarted>(&event.body)) {
        text += QStringLiteral(" steps %1 message [%2]").arg(e->totalSteps).arg(QString::fromStdString(e->message));
        if (!e->name.empty())
            text += QStringLiteral(" name [%1] group [%2] config [%3] environment [%4] recorder [%5]")
                        .arg(QString::fromStdString(e->name), QString::fromStdString(e->group),
                             QString::fromStdString(e->configJson), QString::fromStdString(e->environmentJson),
                             QString::fromStdString(e->recorder));
    }
    if (const auto *e = std::get_if<StepDone>(&event.body)) {
        const StepMetrics &m = e->metrics;
        text += QStringLiteral(" step %1 tokens %2 loss %3 lr %4 norm %5 seconds %6 rate %7 scale %8 skipped %9")
                    .arg(m.step)
                    .arg(m.tokens)
                    .arg(number(m.trainLoss), number(m.learningRate), number(m.gradNorm), number(m.stepSeconds),
                         number(m.tokensPerSecond), number(m.lossScale), QString::number(m.skipped));
        text += QStringLiteral(" gflops %1 allocated %2 peak %3")
                    .arg(number(m.machineGflops))
                    .arg(e->allocatedBytes ? QString::number(*e->allocatedBytes) : QStringLiteral("-"))
                    .arg(e->peakBytes ? QString::number(*e->peakBytes) : QStringLiteral("-"));
    }
    if (const auto *e = std::get_if<Validated>(&event.body))
        text += QStringLiteral(" step %1 tokens %2 loss %3")
                    .arg(e->point.step)
                    .arg(e->point.tokens)
                    .arg(number(e->point.loss))
                + (e->point.sequences
                       ? QStringLiteral(" sequences %1 sd %2").arg(e->point.sequences).arg(number(e->point.sequenceSd))
                       : QString());
    if (const auto *e = std::get_if<MemoryReport>(&event.body)) {
        QStringList rows;
        for (const MemoryRow &row : e->rows)
            rows << QStringLiteral("%1 %2 %3 %4")
                        .arg(QString(memoryRoleName(row.role)), QString::fromStdString(row.dtype))
                        .arg(row.bytes)
                        .arg(QString(memorySourceName(row.source)));
        text += QStringLiteral(" %1; dtypes [%2] peak measure [%3]")
                    .arg(rows.join(QStringLiteral("; ")), QString::fromStdString(e->dtypesJson),
                         QString::fromStdString(e->peakMeasure));
    }
    if (const auto *e = std::get_if<ModelFlops>(&event.body))
        text += QStringLiteral(" %1 per token, %2 [%3]")
                    .arg(number(e->perToken), QString::fromStdString(e->how), QString::fromStdString(e->counter));
    if (const auto *e = std::get_if<RunFinished>(&event.body))
        text += QStringLiteral(" %1 at %2 [%3]")
                    .arg(QString(outcomeName(e->outcome)))
                    .arg(e->step)
                    .arg(QString::fromStdString(e->message));
    if (const auto *e = std::get_if<LogMessage>(&event.body))
        text += QStringLiteral(" [%1]").arg(QString::fromStdString(e->message));
    return text;
}

// A step line as `optlog run --jsonl` writes it.
const char kStepLine[]
    = R"({"allocated_bytes":1048576,"event":"step","grad_norm":0.5,"loss_scale":0.0,"lr":0.001,)"
      R"("machine_gflops":150.5,"peak_bytes":2097152,"run":7,"skipped":false,"step":4,"step_seconds":0.1,)"
      R"("tokens":1280,"tokens_per_second":12800.0,"train_loss":5.25})";

} // namespace

class tst_EngineEvents : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void goodLinesParse_data()
    {
        QTest::addColumn<QString>("line");
        QTest::addColumn<QString>("expected");
        QTest::newRow("started") << R"({"event":"started","message":"data: fortunes","run":3,"steps":300})"
                                 << "started run 3: steps 300 message [data: fortunes]";
        QTest::newRow("started, no message") << R"({"event":"started","run":3,"steps":300})"
                                             << "started run 3: steps 300 message []";
        QTest::newRow("step") << kStepLine
                              << "step run 7: step 4 tokens 1280 loss 5.25 lr 0.001 norm 0.5 seconds 0.1 rate 12800 "
                                 "scale 0 skipped 0 gflops 150.5 allocated 1048576 peak 2097152";
        QTest::newRow("diverged step")
            << R"({"event":"step","grad_norm":null,"loss_scale":0.0,"lr":0.001,"run":7,"skipped":true,"step":0,)"
               R"("step_seconds":0.1,"tokens":128,"tokens_per_second":1280.0,"train_loss":null})"
            << "step run 7: step 0 tokens 128 loss nan lr 0.001 norm nan seconds 0.1 rate 1280 scale 0 skipped 1 "
               "gflops 0 allocated - peak -";
        QTest::newRow("validation") << R"({"event":"validation","run":7,"step":49,"tokens":12800,"val_loss":2.5})"
                                    << "validation run 7: step 49 tokens 12800 loss 2.5";
        QTest::newRow("finished") << R"({"event":"finished","message":"out of memory budget","outcome":"oom","run":7,"step":6})"
                                  << "finished run 7: oom at 6 [out of memory budget]";
        QTest::newRow("note") << R"({"event":"note","message":"hello","run":1})"
                              << "note run 1: [hello]";
        QTest::newRow("warning") << R"({"event":"warning","message":"warm-up","run":1})"
                                 << "warning run 1: [warm-up]";
        // Not a raw string: moc's lexer reads backslashes in raw strings as escapes.
        QTest::newRow("oom") << "{\"event\":\"oom\",\"message\":\"{\\\"phase\\\":\\\"forward\\\"}\",\"run\":1}"
                             << "oom run 1: [{\"phase\":\"forward\"}]";
        QTest::newRow("unknown keys are ignored") << R"({"event":"note","message":"m","run":1,"later":[1,2]})"
                                                  << "note run 1: [m]";
        // What a trainer outside the engine writes for `optlog record` (docs/events.md).
        QTest::newRow("recorded start")
            << R"({"event":"started","format":1,"name":"bf16 s1","group":"bf16","config":{"amp":"bf16","train":{"lr":0.001}},)"
               R"("environment":{"torch":"1.13.1"},"recorder":"optlog Python module 1, train.py"})"
            << "started run 0: steps 0 message [] name [bf16 s1] group [bf16] config "
               "[{\"amp\":\"bf16\",\"train\":{\"lr\":0.001}}] "
               "environment [{\"torch\":\"1.13.1\"}] recorder [optlog Python module 1, train.py]";
        QTest::newRow("recorded step, only the required keys")
            << R"({"event":"step","step":3,"tokens":512,"train_loss":4.5})"
            << "step run 0: step 3 tokens 512 loss 4.5 lr nan norm nan seconds nan rate nan scale 0 skipped 0 "
               "gflops 0 allocated - peak -";
        QTest::newRow("validation with its spread")
            << R"({"event":"validation","step":9,"tokens":100,"val_loss":2.5,"sequences":32,"sequence_sd":0.25})"
            << "validation run 0: step 9 tokens 100 loss 2.5 sequences 32 sd 0.25";
        QTest::newRow("memory")
            << R"({"event":"memory","rows":[{"role":"parameters","bytes":4096,"dtype":"float32"},)"
               R"({"role":"peak","bytes":9000,"source":"measured"}],"dtypes":{"weights":"float32"},"peak_measure":"profiler"})"
            << "memory run 0: parameters float32 4096 measured; peak  9000 measured; dtypes "
               "[{\"weights\":\"float32\"}] "
               "peak measure [profiler]";
        QTest::newRow("flops given") << R"({"event":"flops","per_token":1.5e6})"
                                     << "flops run 0: 1500000 per token, given []";
        QTest::newRow("flops counted")
            << R"({"event":"flops","per_token":3072,"how":"counted","counter":"torch.utils.flop_counter"})"
            << "flops run 0: 3072 per token, counted [torch.utils.flop_counter]";
        QTest::newRow("finished without step or message") << R"({"event":"finished","outcome":"completed"})"
                                                          << "finished run 0: completed at -1 []";
    }
    void goodLinesParse()
    {
        QFETCH(QString, line);
        QFETCH(QString, expected);
        const ParsedEvent parsed = parseEngineEvent(line.toStdString());
        QVERIFY2(parsed.event, parsed.error.c_str());
        QVERIFY(parsed.error.empty());
        QCOMPARE(describe(*parsed.event), expected);
        // What the writer makes of it reads back the same.
        const ParsedEvent again = parseEngineEvent(toJsonLine(*parsed.event));
        QVERIFY2(again.event, again.error.c_str());
        QCOMPARE(describe(*again.event), expected);
    }

    void badLinesSayWhatIsWrong_data()
    {
        QTest::addColumn<QByteArray>("line");
        QTest::addColumn<QString>("error");
        QTest::newRow("empty") << QByteArray() << "not JSON";
        QTest::newRow("text") << QByteArray("OpenBLAS warning: precompiled NUM_THREADS exceeded") << "not JSON";
        QTest::newRow("not UTF-8") << QByteArray("\xff\xfe{") << "not JSON";
        QTest::newRow("array") << QByteArray("[1,2]") << "not a JSON object";
        QTest::newRow("number") << QByteArray("42") << "not a JSON object";
        QTest::newRow("no kind") << QByteArray(R"({"run":1})") << "'event' is missing";
        QTest::newRow("kind not a string") << QByteArray(R"({"event":5,"run":1})") << "'event' must be a string";
        QTest::newRow("unknown kind") << QByteArray(R"({"event":"teleport","run":1})")
                                      << "unknown event kind 'teleport'";
        QTest::newRow("run a string") << QByteArray(R"({"event":"note","message":"m","run":"one"})")
                                      << "'run' must be a 64-bit integer";
        QTest::newRow("run past int64") << QByteArray(R"({"event":"note","message":"m","run":18446744073709551615})")
                                        << "'run' must be a 64-bit integer";
        QTest::newRow("a newer format") << QByteArray(R"({"event":"started","format":2,"name":"a"})")
                                        << "written in event format 2, and this optlog reads formats 1 to 1";
        QTest::newRow("config not an object") << QByteArray(R"({"event":"started","name":"a","config":[1]})")
                                              << "'config' must be an object, not an array";
        QTest::newRow("memory without rows") << QByteArray(R"({"event":"memory"})") << "'rows' is missing";
        QTest::newRow("memory role unknown")
            << QByteArray(R"({"event":"memory","rows":[{"role":"weights","bytes":1}]})")
            << "'rows' entry 1: 'role' is 'weights', which is not a memory role";
        QTest::newRow("memory bytes negative")
            << QByteArray(R"({"event":"memory","rows":[{"role":"peak","bytes":5},{"role":"peak","bytes":-5}]})")
            << "'rows' entry 2: 'bytes' is -5";
        QTest::newRow("flops of none") << QByteArray(R"({"event":"flops","per_token":0})")
                                       << "'per_token' is 0: the model's FLOPs per token are a number above 0";
        QTest::newRow("flops not finite")
            << QByteArray(R"({"event":"flops","per_token":null})") << "'per_token' is null";
        QTest::newRow("flops guessed") << QByteArray(R"({"event":"flops","per_token":5,"how":"guessed"})")
                                       << "'how' is 'guessed': given (by the trainer) or counted";
        QTest::newRow("fractional steps")
            << QByteArray(R"({"event":"started","run":1,"steps":2.5})") << "'steps' must be a 64-bit integer";
        QTest::newRow("loss a string") << QByteArray(
            R"({"event":"step","grad_norm":1,"loss_scale":0,"lr":1,"run":1,"skipped":false,"step":0,)"
            R"("step_seconds":1,"tokens":1,"tokens_per_second":1,"train_loss":"high"})")
                                       << "'train_loss' must be a number or null";
        QTest::newRow("skipped a number")
            << QByteArray(R"({"event":"step","grad_norm":1,"loss_scale":0,"lr":1,"run":1,"skipped":1,"step":0,)"
                          R"("step_seconds":1,"tokens":1,"tokens_per_second":1,"train_loss":1})")
            << "'skipped' must be true or false";
        QTest::newRow("step without tokens")
            << QByteArray(R"({"event":"validation","run":1,"step":0,"val_loss":1})") << "'tokens' is missing";
        QTest::newRow("unknown outcome") << QByteArray(
            R"({"event":"finished","message":"","outcome":"exploded","run":1,"step":0})")
                                         << "'outcome' is 'exploded'";
        QTest::newRow("message null") << QByteArray(R"({"event":"warning","message":null,"run":1})")
                                      << "'message' must be a string";
        QTest::newRow("deeply nested") << QByteArray(100000, '[') + QByteArray(100000, ']') << "not a JSON object";
        QTest::newRow("too long") << QByteArray(2 << 20, ' ') << "longer than any event";
    }
    void badLinesSayWhatIsWrong()
    {
        QFETCH(QByteArray, line);
        QFETCH(QString, error);
        const ParsedEvent parsed = parseEngineEvent(line.toStdString());
        QVERIFY(!parsed.event);
        QVERIFY2(QString::fromStdString(parsed.error).contains(error), parsed.error.c_str());
    }

    // Every prefix of a real line (a pipe read cut short) is refused with a reason, never read as
    // an event and never a crash.
    void truncatedLinesAreRefused()
    {
        const std::string line = kStepLine;
        QVERIFY(parseEngineEvent(line).event);
        for (size_t length = 0; length < line.size(); ++length) {
            const ParsedEvent parsed = parseEngineEvent(line.substr(0, length));
            QVERIFY2(!parsed.event && !parsed.error.empty(), line.substr(0, length).c_str());
        }
    }

    void writerWritesTheFormatOthersRead()
    {
        StepMetrics m;
        m.step = 3;
        m.tokens = 512;
        m.trainLoss = std::nan("");
        const std::string line = toJsonLine({2, StepDone{m, std::nullopt, std::nullopt}});
        QVERIFY2(line.find(R"("event":"step")") != std::string::npos, line.c_str());
        QVERIFY2(line.find(R"("train_loss":null)") != std::string::npos, line.c_str()); // JSON has no NaN
        QVERIFY2(line.find("allocated_bytes") == std::string::npos, line.c_str());      // absent, not 0
        QVERIFY(line.find('\n') == std::string::npos);
        // A message that is not UTF-8 (a file name) is written with a replacement, never thrown on.
        RunStarted start;
        start.totalSteps = 10;
        start.message = "data: caf\xe9.txt";
        const std::string started = toJsonLine({2, start});
        QVERIFY2(parseEngineEvent(started).event, started.c_str());
        for (const char *name : {"started", "step", "validation", "memory", "finished", "note", "warning", "oom"})
            QCOMPARE(QString(eventKindName(*eventKindNamed(name))), QString(name));
        QVERIFY(!eventKindNamed("log"));
    }
};

QTEST_APPLESS_MAIN(tst_EngineEvents)
#include "tst_engineevents.moc"
