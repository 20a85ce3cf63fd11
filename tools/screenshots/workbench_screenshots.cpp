// SPDX-License-Identifier: MIT
// Screenshots of the workbench over a real study, for docs/ and for looking at: the Design page
// with a sweep, the Monitor page while a real engine streams a run, and Compare with every run of
// the study against its first. Run it under Xvfb (take.sh) so that it renders as on a desktop.
#include "core/store/curation.h"
#include "core/store/store.h"
#include "ui/charts/comparisoncharts.h"
#include "ui/charts/spreadchart.h"
#include "ui/compareview.h"
#include "ui/designerview.h"
#include "ui/mainwindow.h"
#include "ui/monitorview.h"
#include "ui/runqueue.h"
#include "ui/runsview.h"
#include "ui/studywatcher.h"

#include <QApplication>
#include <QDir>
#include <QEventLoop>
#include <QPalette>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QStandardPaths>
#include <QTimer>
#include <cstdio>

namespace {

void wait(int milliseconds)
{
    QEventLoop loop;
    QTimer::singleShot(milliseconds, &loop, &QEventLoop::quit);
    loop.exec();
}

// False after saying why: a missing screenshot must fail take.sh, not pass unnoticed.
bool save(QWidget *window, const QString &folder, const QString &name)
{
    wait(300); // let layouts settle and charts paint
    const QString path = QDir(folder).filePath(name);
    if (!window->grab().save(path)) {
        std::fprintf(stderr, "cannot write %s\n", qPrintable(path));
        return false;
    }
    std::printf("%s\n", qPrintable(path));
    return true;
}

// A dark palette as a desktop's dark theme gives one, for the Fusion style.
QPalette darkPalette()
{
    QPalette p;
    const QColor window(0x2b, 0x2b, 0x2e), base(0x1e, 0x1e, 0x20), text(0xe8, 0xe8, 0xe8);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, window);
    p.setColor(QPalette::ToolTipBase, base);
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, QColor(0x9a, 0x9a, 0x9a));
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, window);
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, Qt::red);
    p.setColor(QPalette::Link, QColor(0x56, 0xb4, 0xe9));
    p.setColor(QPalette::Highlight, QColor(0x00, 0x72, 0xb2));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Disabled, QPalette::Text, QColor(0x80, 0x80, 0x80));
    p.setColor(QPalette::Disabled, QPalette::ButtonText, QColor(0x80, 0x80, 0x80));
    return p;
}

} // namespace

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    QStandardPaths::setTestModeEnabled(true); // leave the user's settings and recent files alone
    QSettings().clear();                      // and show the window as on a first start
    if (argc < 4) {
        std::fprintf(stderr,
                     "usage: %s STUDY(.sqlite, with finished runs) OUTPUT_FOLDER ENGINE [--dark] [WIDTHxHEIGHT...]\n",
                     argv[0]);
        return 2;
    }
    const QString study = QString::fromLocal8Bit(argv[1]);
    const QString folder = QString::fromLocal8Bit(argv[2]);
    QDir().mkpath(folder);
    QStringList sizes;
    bool dark = false;
    for (int i = 4; i < argc; ++i) {
        if (QString::fromLocal8Bit(argv[i]) == QStringLiteral("--dark"))
            dark = true;
        else
            sizes << QString::fromLocal8Bit(argv[i]);
    }
    if (sizes.isEmpty())
        sizes << QStringLiteral("1280x800") << QStringLiteral("1920x1080");
    if (dark) {
        QApplication::setStyle(QStringLiteral("Fusion"));
        QApplication::setPalette(darkPalette());
    }
    // The variants (dark, a scale factor) are of the pages with charts and tables; the plain
    // light ones of every page.
    const double scale = qEnvironmentVariableIsSet("QT_SCALE_FACTOR") ? qgetenv("QT_SCALE_FACTOR").toDouble() : 1.0;
    const bool variant = dark || scale != 1.0;
    const QString suffix = (scale != 1.0 ? QStringLiteral("@%1x").arg(scale) : QString())
                           + (dark ? QStringLiteral("-dark") : QString()) + QStringLiteral(".png");

    // The monitor streams a fresh run into a copy, so the study handed in stays as it was.
    const QString live = QDir(folder).filePath(QStringLiteral("screenshot-study.sqlite"));
    QFile::remove(live);
    if (!QFile::copy(study, live)) {
        std::fprintf(stderr, "cannot copy %s\n", qPrintable(study));
        return 1;
    }

    optlog::MainWindow window(QString::fromLocal8Bit(argv[3]));
    if (!window.openStudy(live))
        return 1;
    window.show();
    window.watcher()->refresh();
    wait(1500);
    const optlog::StudySnapshot &snapshot = window.watcher()->snapshot();
    QList<qint64> all;
    for (const auto &run : snapshot.runs)
        all << run->run().id;
    if (all.size() < 2) {
        std::fprintf(stderr, "%s: needs a study with two or more runs for Compare (it has %lld)\n", qPrintable(study),
                     static_cast<long long>(all.size()));
        return 1;
    }
    window.compareView()->setSelectedRuns(all);

    optlog::DesignerView *designer = window.designer();
    designer->setRunName(QStringLiteral("grid"));
    designer->setSweepAxis(0, QStringLiteral("train.microbatch"), QStringLiteral("4, 8"));
    designer->setSweepAxis(1, QStringLiteral("precision.mode"), QStringLiteral("fp32, autocast-bf16"));
    designer->revalidate();

    optlog::PlannedRun run;
    run.name = "autocast-bf16 (live)";
    run.preset = "default";
    run.overrides = {"precision.mode=\"autocast-bf16\"", "train.steps=3000", "train.eval_interval=25"};
    int events = 0;
    QObject::connect(window.queue(), &optlog::RunQueue::engineEvent, &window, [&events] { ++events; });
    window.queue()->enqueue(run);
    window.queue()->start();
    wait(25000); // long enough for the charts to show a curve, short of the end: the Monitor is live
    if (events == 0 || !window.monitor()->isLive()) {
        std::fprintf(stderr, "the live run did not stream (%d events): no Monitor screenshot to take\n", events);
        return 1;
    }

    for (const QString &size : sizes) {
        const QStringList wh = size.split(QLatin1Char('x'));
        window.resize(wh.value(0).toInt(), wh.value(1).toInt());
        wait(500);
        bool saved = true;
        if (!variant) {
            window.showPage(0);
            saved = save(&window, folder, QStringLiteral("design-%1").arg(size) + suffix) && saved;
        }
        window.showPage(1);
        saved = save(&window, folder, QStringLiteral("monitor-%1").arg(size) + suffix) && saved;
        window.showPage(2);
        saved = save(&window, folder, QStringLiteral("compare-%1").arg(size) + suffix) && saved;
        // Compare's details scrolled: the throughput chart from its title down (a third of the way
        // once cut it in half, its fastest runs above the view), then memory by role and the config diff.
        if (auto *scroll = window.compareView()->findChild<QScrollArea *>()) {
            QScrollBar *bar = scroll->verticalScrollBar();
            const QWidget *throughput = window.compareView()->charts().throughput;
            bar->setValue(throughput->mapTo(scroll->widget(), QPoint(0, 0)).y());
            saved = save(&window, folder, QStringLiteral("compare-charts-%1").arg(size) + suffix) && saved;
            bar->setValue(bar->maximum());
            saved = save(&window, folder, QStringLiteral("compare-lower-%1").arg(size) + suffix) && saved;
            bar->setValue(0);
        }
        if (!saved)
            return 1;
    }
    window.queue()->cancelRunning();
    wait(2000);
    if (variant)
        return 0;

    // Curation: the 16-bit runs tagged, one with a note, the Runs list filtered to them, and the
    // note beside the verdicts in Compare.
    qint64 noted = 0;
    {
        optlog::Store store(live.toStdString());
        for (const auto &record : store.runs()) {
            if (record.configToml.find("bf16") == std::string::npos || record.outcome != optlog::Outcome::Completed)
                continue;
            optlog::changeTags(store, record.id, {"bf16"}, {});
            if (noted == 0 && record.name.find("pure") != std::string::npos) {
                noted = record.id;
                optlog::setNote(store, record.id,
                                "Pure BF16: weights, gradients and Adam's moments in bfloat16.\n"
                                "Check the vanishing-update share before a longer run.");
            }
        }
    }
    if (noted == 0) {
        std::fprintf(stderr, "%s: no finished pure-bf16 run to write a note on\n", qPrintable(study));
        return 1;
    }
    optlog::RunsView::FilterState filter;
    filter.text = QStringLiteral("tag:bf16");
    window.runsView()->setFilterState(filter);
    window.watcher()->refresh();
    wait(1500);
    window.compareView()->setBaseline(all.first());
    window.compareView()->setSelectedRuns({all.first(), noted});
    window.showPage(2);
    for (const QString &size : sizes) {
        const QStringList wh = size.split(QLatin1Char('x'));
        window.resize(wh.value(0).toInt(), wh.value(1).toInt());
        wait(500);
        if (!save(&window, folder, QStringLiteral("curation-%1.png").arg(size)))
            return 1;
    }
    return 0;
}
