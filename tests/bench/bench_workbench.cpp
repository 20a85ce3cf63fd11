// SPDX-License-Identifier: MIT
// How responsive the workbench stays under load: 20 finished runs of 10,000 steps each open in
// Compare while a real engine streams a run at full speed into the Monitor. Prints the longest
// event-loop stall (target: under 50 ms), the stall percentiles, and what each redraw costs.
//   build/tests/bench/bench_workbench [ENGINE] [SECONDS]      (QT_QPA_PLATFORM=offscreen or Xvfb)
#include "core/config/config.h"
#include "core/store/store.h"
#include "ui/compareview.h"
#include "ui/mainwindow.h"
#include "ui/monitorview.h"
#include "ui/runqueue.h"
#include "ui/studywatcher.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTimer>
#include <algorithm>
#include <cstdio>
#include <vector>

using namespace optlog;

namespace {

constexpr int kFinishedRuns = 20;
constexpr int kStepsPerRun = 10000;

void writeFinishedRuns(const std::string &path)
{
    Store store(path);
    for (int r = 0; r < kFinishedRuns; ++r) {
        RunConfig config;
        config.name = "finished-" + std::to_string(r);
        config.train.steps = kStepsPerRun;
        const int64_t id = store.createRun(config.name, toToml(config));
        std::vector<StepMetrics> steps;
        std::vector<ValidationPoint> validation;
        for (int64_t s = 0; s < kStepsPerRun; ++s) {
            StepMetrics m;
            m.step = s;
            m.tokens = (s + 1) * 1024;
            m.trainLoss = 5.0 / (1.0 + 0.001 * double(s)) + 0.01 * double(r);
            m.stepSeconds = 0.2;
            m.tokensPerSecond = 5000 + 10 * r + (s % 7) * 30;
            steps.push_back(m);
            if (s % 100 == 99)
                validation.push_back({s, m.tokens, m.trainLoss + 0.05});
        }
        store.appendMetrics(id, steps);
        store.appendValidation(id, validation);
        store.replaceMemory(id, {{MemoryRole::Parameters, "float32", 13 << 20, MemorySource::Measured},
                                 {MemoryRole::SavedActivations, "mixed", 75 << 20, MemorySource::Measured},
                                 {MemoryRole::Peak, "", 128 << 20, MemorySource::Measured},
                                 {MemoryRole::Parameters, "float32", 13 << 20, MemorySource::Predicted}});
        store.finishRun(id, Outcome::Completed, kStepsPerRun - 1, "");
    }
}

void wait(int milliseconds)
{
    QEventLoop loop;
    QTimer::singleShot(milliseconds, &loop, &QEventLoop::quit);
    loop.exec();
}

double percentile(std::vector<double> values, double q)
{
    if (values.empty())
        return 0;
    std::sort(values.begin(), values.end());
    return values[size_t(q * double(values.size() - 1))];
}

} // namespace

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    QStandardPaths::setTestModeEnabled(true);
    const QString engine = argc > 1 ? QString::fromLocal8Bit(argv[1]) : RunQueue::defaultOptlogBinary();
    const int seconds = argc > 2 ? std::atoi(argv[2]) : 20;
    QTemporaryDir dir;
    const std::string study = dir.filePath(QStringLiteral("bench.sqlite")).toStdString();

    QElapsedTimer clock;
    clock.start();
    writeFinishedRuns(study);
    std::printf("wrote %d finished runs x %d steps in %.1f s\n", kFinishedRuns, kStepsPerRun, clock.elapsed() / 1000.0);

    MainWindow window(engine);
    window.resize(1280, 800);
    window.show();
    clock.restart();
    if (!window.openStudy(QString::fromStdString(study)))
        return 1;
    while (window.watcher()->snapshot().runs.size() < size_t(kFinishedRuns))
        wait(10);
    std::printf("first snapshot of the study (worker thread): %lld ms\n", static_cast<long long>(clock.elapsed()));
    QList<qint64> all;
    for (const auto &run : window.watcher()->snapshot().runs)
        all << run->run().id;
    window.compareView()->setSelectedRuns(all);
    window.showPage(2);
    std::printf("compare view, %d runs: %.1f ms to fill\n", kFinishedRuns,
                window.compareView()->lastUpdateMilliseconds());

    // The stall probe: a 5 ms timer; any gap beyond that is time the event loop was blocked.
    std::vector<double> gaps, gapEnds; // each stall, and when it ended (ms since the probe started)
    QElapsedTimer tick, since;
    QTimer probe;
    probe.setTimerType(Qt::PreciseTimer);
    probe.setInterval(5);
    QObject::connect(&probe, &QTimer::timeout, &window, [&] {
        if (tick.isValid()) {
            gaps.push_back(std::max(0.0, double(tick.nsecsElapsed()) / 1e6 - 5.0));
            gapEnds.push_back(double(since.nsecsElapsed()) / 1e6);
        }
        tick.restart();
    });

    int events = 0;
    std::vector<double> redraws;
    QObject::connect(window.queue(), &RunQueue::engineEvent, &window, [&] { ++events; });
    QObject::connect(&probe, &QTimer::timeout, &window, [&, last = 0]() mutable {
        if (window.monitor()->redraws() != last) {
            last = window.monitor()->redraws();
            redraws.push_back(window.monitor()->lastRedrawMilliseconds());
        }
    });

    PlannedRun run;
    run.name = "streaming";
    run.preset = "smoke";
    run.overrides = {"data.corpus=generated", "train.steps=1000000", "train.eval_interval=100"};
    window.queue()->enqueue(run);
    window.queue()->start();
    while (events == 0)
        wait(10);
    window.showPage(1); // the monitor draws while Compare holds its 20 runs
    probe.start();
    since.start();
    const int halfway = seconds * 500;
    wait(halfway);
    const double switched = double(since.nsecsElapsed()) / 1e6;
    window.showPage(2); // and switching back re-lays out Compare under the stream
    wait(halfway);
    probe.stop();
    window.queue()->cancelRunning();
    wait(1500);

    std::printf("engine events received: %d in %d s (%.0f per second)\n", events, seconds, events / double(seconds));
    std::printf(
        "event-loop stall: longest %.1f ms, p99 %.1f ms, median %.1f ms over %zu ticks (target: longest < 50 ms)\n",
        percentile(gaps, 1.0), percentile(gaps, 0.99), percentile(gaps, 0.5), gaps.size());
    std::printf("monitor redraws: %zu, median %.1f ms, longest %.1f ms\n", redraws.size(), percentile(redraws, 0.5),
                percentile(redraws, 1.0));
    // Where the longest stalls were: at the switch to Compare, or while streaming.
    std::vector<size_t> order(gaps.size());
    for (size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return gaps[a] > gaps[b]; });
    std::printf("longest stalls:");
    for (size_t k = 0; k < std::min<size_t>(5, order.size()); ++k) {
        const double start = gapEnds[order[k]] - gaps[order[k]] - 5.0 - switched;
        std::printf(" %.1f ms %s", gaps[order[k]],
                    std::abs(start) < 20
                        ? "(the switch to Compare)"
                        : qPrintable(QStringLiteral("(%1 s %2 the switch)")
                                         .arg(std::abs(start) / 1000, 0, 'f', 1)
                                         .arg(start < 0 ? QStringLiteral("before") : QStringLiteral("after"))));
    }
    std::printf("\n");
    return 0;
}
