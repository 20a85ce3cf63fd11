// SPDX-License-Identifier: MIT
// A step's memory timeline as data (core/contract/memorytimeline.h): thinned to its point budget
// without losing a phase's highest or lowest point, written and read as JSON and as an event, and
// refused, naming what is wrong, where it comes from anywhere.
#include "core/contract/engineevents.h"
#include "core/contract/inputerror.h"
#include "core/contract/memorytimeline.h"

#include <nlohmann/json.hpp>

#include <QtTest>
#include <algorithm>
#include <random>

using namespace optlog;

namespace {

// A step of `events` allocations and frees over `phases` phases, its bytes a random walk.
MemoryTimeline randomStep(int64_t events, int64_t phases, uint32_t seed)
{
    std::mt19937 random(seed);
    std::uniform_int_distribution<int64_t> change(-4096, 4200);
    MemoryTimeline timeline;
    timeline.source = "allocations";
    timeline.step = 3;
    timeline.measuredStep = true;
    timeline.events = events;
    int64_t bytes = 1 << 20;
    for (int64_t e = 0; e < events; ++e) {
        if (e % (events / phases) == 0 && int64_t(timeline.phases.size()) < phases) {
            TimelinePhase phase;
            phase.part = timeline.phases.empty() ? StepPart::Forward : StepPart::Backward;
            phase.block = int64_t(timeline.phases.size()) - 1;
            phase.firstEvent = e;
            phase.startBytes = bytes;
            timeline.phases.push_back(phase);
        }
        bytes = std::max<int64_t>(0, bytes + change(random));
        timeline.eventOfPoint.push_back(e);
        timeline.bytesOfPoint.push_back(bytes);
        TimelinePhase &phase = timeline.phases.back();
        phase.peakBytes = std::max({phase.peakBytes, phase.startBytes, bytes});
    }
    timeline.statesBefore = {{MemoryRole::Parameters, 4096}, {MemoryRole::OptimizerState, 8192}};
    return timeline;
}

// Each phase's highest and lowest point.
std::vector<std::pair<int64_t, int64_t>> extremesByPhase(const MemoryTimeline &timeline)
{
    std::vector<std::pair<int64_t, int64_t>> extremes(timeline.phases.size(), {INT64_MAX, -1});
    for (size_t i = 0; i < timeline.eventOfPoint.size(); ++i) {
        auto &[low, high] = extremes[timeline.phaseOfEvent(timeline.eventOfPoint[i])];
        low = std::min(low, timeline.bytesOfPoint[i]);
        high = std::max(high, timeline.bytesOfPoint[i]);
    }
    return extremes;
}

nlohmann::json validJson()
{
    MemoryTimeline timeline = randomStep(400, 4, 7);
    return timelineToJson(timeline);
}

} // namespace

class tst_MemoryTimeline : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void thinningKeepsEveryPhasesHighestAndLowestPoint_data();
    void thinningKeepsEveryPhasesHighestAndLowestPoint();
    void itIsWrittenAndReadBackWholeAsJsonAndAsAnEvent();
    void aTimelineFromAnywhereIsRefusedNamingWhatIsWrong_data();
    void aTimelineFromAnywhereIsRefusedNamingWhatIsWrong();
};

void tst_MemoryTimeline::thinningKeepsEveryPhasesHighestAndLowestPoint_data()
{
    QTest::addColumn<qint64>("events");
    QTest::addColumn<qint64>("phases");
    QTest::newRow("a small step: kept whole") << qint64(1500) << qint64(6);
    QTest::newRow("50,000 events, 40 phases") << qint64(50000) << qint64(40);
    QTest::newRow("300,000 events, 200 phases") << qint64(300000) << qint64(200);
    QTest::newRow("more phases than half the budget") << qint64(20000) << qint64(1500);
}

void tst_MemoryTimeline::thinningKeepsEveryPhasesHighestAndLowestPoint()
{
    QFETCH(qint64, events);
    QFETCH(qint64, phases);
    MemoryTimeline timeline = randomStep(events, phases, 42);
    const auto before = extremesByPhase(timeline);
    const int64_t peak = timeline.peakBytes(), peakPhase = timeline.peakPhase();
    thinPoints(timeline);
    QVERIFY(timeline.eventOfPoint.size() <= std::max<size_t>(MemoryTimeline::kMaxPoints, 2 * size_t(phases)));
    QVERIFY(std::is_sorted(timeline.eventOfPoint.begin(), timeline.eventOfPoint.end()));
    QCOMPARE(extremesByPhase(timeline), before);
    QCOMPARE(timeline.peakBytes(), peak);
    QCOMPARE(timeline.peakPhase(), peakPhase);
    if (events <= int64_t(MemoryTimeline::kMaxPoints))
        QCOMPARE(timeline.eventOfPoint.size(), size_t(events));
}

void tst_MemoryTimeline::itIsWrittenAndReadBackWholeAsJsonAndAsAnEvent()
{
    MemoryTimeline timeline = randomStep(30000, 12, 3);
    timeline.phases[4].block = TimelinePhase::kLossBlock;
    timeline.phases[5].microbatch = 1;
    thinPoints(timeline);
    const std::string text = timelineText(timeline);
    QCOMPARE(timelineText(timelineFromText(text)), text);
    QCOMPARE(timelineFromText(text).phases[4].name(), std::string("backward, loss"));
    QCOMPARE(timelineFromText(text).statesBefore.at(MemoryRole::OptimizerState), int64_t(8192));
    // As the event a followed run's host and the Python module send.
    const std::string line = toJsonLine({7, MemoryTimelineReport{timeline}});
    QVERIFY(line.size() < kMaxEventLineBytes);
    const ParsedEvent parsed = parseEngineEvent(line);
    QVERIFY2(parsed.event, parsed.error.c_str());
    QCOMPARE(parsed.event->kind(), EventKind::Timeline);
    QCOMPARE(timelineText(std::get<MemoryTimelineReport>(parsed.event->body).timeline), text);
}

void tst_MemoryTimeline::aTimelineFromAnywhereIsRefusedNamingWhatIsWrong_data()
{
    QTest::addColumn<QString>("change");
    QTest::addColumn<QString>("expected");
    QTest::newRow("no phases") << R"({"phases": 3})"
                               << "'phases' must be an array";
    QTest::newRow("an unknown part")
        << R"({"phases": [{"part": "lunch", "first_event": 0, "start_bytes": 0, "peak_bytes": 0}]})"
        << "phase 0: 'part' is \"lunch\"";
    QTest::newRow("a negative block")
        << R"({"phases": [{"part": "forward", "block": -3, "first_event": 0, "start_bytes": 0, "peak_bytes": 0}]})"
        << "'block' is -3";
    QTest::newRow("a peak below its start")
        << R"({"phases": [{"part": "forward", "first_event": 0, "start_bytes": 9, "peak_bytes": 2}]})"
        << "'peak_bytes' (2) is below 'start_bytes' (9)";
    QTest::newRow("phases out of order")
        << R"({"phases": [{"part": "forward", "first_event": 0, "start_bytes": 0, "peak_bytes": 0}, {"part": "loss", "first_event": -1, "start_bytes": 0, "peak_bytes": 0}]})"
        << "cannot be negative";
    QTest::newRow("points of two lengths") << R"({"points": {"event": [0, 1], "bytes": [5]}})"
                                           << "must be as long as each other";
    QTest::newRow("points falling back") << R"({"points": {"event": [5, 1], "bytes": [5, 6]}})"
                                         << "'points.event' must rise";
    QTest::newRow("a point past the step") << R"({"points": {"event": [0, 400000], "bytes": [5, 6]}})"
                                           << "'points.event' must rise, within the step's 400 events";
    QTest::newRow("negative bytes") << R"({"points": {"event": [0], "bytes": [-5]}})"
                                    << "expected integers from 0";
    QTest::newRow("a state that is not one") << R"({"states_before": {"peak": 5}})"
                                             << "'states_before' has 'peak'";
    QTest::newRow("a step as text") << R"({"step": "three"})"
                                    << "'step' must be a 64-bit integer";
}

void tst_MemoryTimeline::aTimelineFromAnywhereIsRefusedNamingWhatIsWrong()
{
    QFETCH(QString, change);
    QFETCH(QString, expected);
    nlohmann::json json = validJson();
    json.update(nlohmann::json::parse(change.toStdString()));
    try {
        timelineFromJson(json);
        QFAIL("accepted");
    } catch (const InputError &e) {
        QVERIFY2(QString(e.what()).contains(expected), e.what());
        QVERIFY(QString(e.what()).startsWith("a memory timeline "));
    }
    // In an event, the same words, and no event.
    const ParsedEvent parsed = parseEngineEvent(nlohmann::json{{"event", "memory_timeline"}, {"timeline", json}}.dump());
    QVERIFY(!parsed.event);
    QVERIFY2(QString::fromStdString(parsed.error).contains(expected), parsed.error.c_str());
}

QTEST_GUILESS_MAIN(tst_MemoryTimeline)
#include "tst_memorytimeline.moc"
