// SPDX-License-Identifier: MIT
// How long the Memory page holds the event loop: four runs whose timelines are as large as a run
// stores (2,000 points, 64 phases: a 30-block model), drawn side by side, overlaid, and on the
// other step, ROUNDS times each, with a 5 ms timer probing for stalls. Prints the longest stall
// (target: under 50 ms) and what each draw took.
//   build/tests/bench/bench_memoryview [ROUNDS]      (QT_QPA_PLATFORM=offscreen or Xvfb)
#include "core/config/config.h"
#include "core/store/store.h"
#include "ui/mainwindow.h"
#include "ui/memoryview.h"
#include "ui/runsview.h"
#include "ui/studywatcher.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTimer>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

using namespace optlog;

namespace {

constexpr int kRuns = 4;
constexpr int kBlocks = 30;

// A step of a kBlocks-block model, its bytes a hill with spikes: kMaxPoints points as stored.
MemoryTimeline largestTimeline(int64_t step, bool first, int run)
{
    MemoryTimeline t;
    t.source = "allocations";
    t.step = step;
    t.firstStep = first;
    t.measuredStep = !first;
    const auto phase = [&](StepPart part, int64_t block) {
        TimelinePhase p;
        p.part = part;
        p.block = block;
        p.firstEvent = t.events;
        t.phases.push_back(p);
    };
    int64_t bytes = 400 << 20;
    const auto points = [&](int count, int64_t rise) {
        for (int i = 0; i < count; ++i) {
            bytes += rise + ((i % 5 == 4) ? -(int64_t(3) << 20) : (int64_t(3) << 20) / 4) * (run + 1);
            t.eventOfPoint.push_back(t.events++);
            t.bytesOfPoint.push_back(bytes);
        }
    };
    phase(StepPart::Forward, TimelinePhase::kNoBlock);
    points(20, 1 << 20);
    for (int64_t b = 0; b < kBlocks; ++b) {
        phase(StepPart::Forward, b);
        points(30, 2 << 20);
    }
    phase(StepPart::Loss, TimelinePhase::kNoBlock);
    points(20, 4 << 20);
    phase(StepPart::Backward, TimelinePhase::kLossBlock);
    points(20, -(1 << 20));
    for (int64_t b = kBlocks - 1; b >= 0; --b) {
        phase(StepPart::Backward, b);
        points(30, -(2 << 20));
    }
    phase(StepPart::UnscaleAndClip, TimelinePhase::kNoBlock);
    points(20, 0);
    phase(StepPart::OptimizerStep, TimelinePhase::kNoBlock);
    points(int(MemoryTimeline::kMaxPoints) - int(t.eventOfPoint.size()), 0);
    for (size_t i = 0; i < t.phases.size(); ++i) {
        const int64_t begin = t.phases[i].firstEvent;
        const int64_t end = i + 1 < t.phases.size() ? t.phases[i + 1].firstEvent : t.events;
        t.phases[i].startBytes = begin > 0 ? t.bytesOfPoint[size_t(begin - 1)] : 400 << 20;
        t.phases[i].peakBytes = std::max(t.phases[i].startBytes, *std::max_element(t.bytesOfPoint.begin() + begin,
                                                                                   t.bytesOfPoint.begin() + end));
    }
    t.statesBefore = {{MemoryRole::Parameters, 100 << 20},
                      {MemoryRole::Gradients, 100 << 20},
                      {MemoryRole::OptimizerState, 200 << 20}};
    return t;
}

void wait(int milliseconds)
{
    QEventLoop loop;
    QTimer::singleShot(milliseconds, &loop, &QEventLoop::quit);
    loop.exec();
}

} // namespace

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    QStandardPaths::setTestModeEnabled(true);
    const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
    QTemporaryDir dir;
    const std::string study = dir.filePath(QStringLiteral("bench.sqlite")).toStdString();
    {
        Store store(study);
        for (int r = 0; r < kRuns; ++r) {
            RunConfig config;
            config.name = "run-" + std::to_string(r);
            const int64_t id = store.createRun(config.name, toToml(config));
            store.storeTimelines(id, {largestTimeline(0, true, r), largestTimeline(10, false, r)});
            store.finishRun(id, Outcome::Completed, 20, "");
        }
    }
    MainWindow window(QStringLiteral("optlog"));
    window.resize(1680, 900);
    window.show();
    if (!window.openStudy(QString::fromStdString(study)))
        return 1;
    while (window.watcher()->snapshot().runs.size() < size_t(kRuns))
        wait(10);
    window.runsView()->table()->selectAll();

    std::vector<double> gaps, draws;
    std::vector<std::pair<double, const char *>> longest; // stalls of 30 ms or more, after what
    const char *last = "opening";
    QElapsedTimer tick;
    QTimer probe;
    probe.setTimerType(Qt::PreciseTimer);
    probe.setInterval(5);
    QObject::connect(&probe, &QTimer::timeout, &window, [&] {
        if (tick.isValid()) {
            gaps.push_back(std::max(0.0, double(tick.nsecsElapsed()) / 1e6 - 5.0));
            if (gaps.back() >= 30)
                longest.push_back({gaps.back(), last});
        }
        tick.restart();
    });
    probe.start();
    MemoryView *memory = window.memoryView();
    for (int round = 0; round < rounds; ++round) {
        last = "showing the page, side by side";
        window.showPage(3);
        wait(300);
        draws.push_back(memory->lastDrawMilliseconds());
        last = "overlaid";
        memory->setArrangement(MemoryView::Arrangement::Overlaid);
        wait(300);
        draws.push_back(memory->lastDrawMilliseconds());
        last = "the first step, overlaid";
        memory->setStep(MemoryView::Step::First);
        wait(300);
        draws.push_back(memory->lastDrawMilliseconds());
        last = "the first step, side by side";
        memory->setArrangement(MemoryView::Arrangement::SideBySide);
        wait(300);
        draws.push_back(memory->lastDrawMilliseconds());
        last = "the measured step, side by side";
        memory->setStep(MemoryView::Step::FirstMeasured);
        wait(300);
        last = "another page";
        window.showPage(0);
        wait(200);
    }
    probe.stop();
    std::sort(gaps.begin(), gaps.end());
    std::sort(draws.begin(), draws.end());
    std::printf("%d runs x %zu points, %d rounds of 4 draws each: draw median %.1f ms, longest %.1f ms\n", kRuns,
                MemoryTimeline::kMaxPoints, rounds, draws[draws.size() / 2], draws.back());
    std::printf("event-loop stall: longest %.1f ms, p99 %.1f ms over %zu ticks (target: longest < 50 ms)\n",
                gaps.back(), gaps[size_t(0.99 * double(gaps.size() - 1))], gaps.size());
    for (const auto &[milliseconds, after] : longest)
        std::printf("  %.1f ms after %s\n", milliseconds, after);
    return 0;
}
