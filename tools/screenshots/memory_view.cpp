// SPDX-License-Identifier: MIT
// Screenshots of the Memory page: the study's runs selected in the Runs list as a person would,
// side by side and overlaid, on the first measured step and on the first step. Run it under Xvfb
// (memory_view.sh trains the runs first).
#include "ui/mainwindow.h"
#include "ui/memoryview.h"
#include "ui/runsview.h"
#include "ui/studywatcher.h"

#include <QApplication>
#include <QEventLoop>
#include <QItemSelectionModel>
#include <QSettings>
#include <QStandardPaths>
#include <QTableView>
#include <QTimer>
#include <cstdio>

namespace {

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
    QStandardPaths::setTestModeEnabled(true); // leave the user's settings and recent files alone
    QSettings().clear();
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s STUDY OUTPUT_FOLDER ENGINE\n", argv[0]);
        return 2;
    }
    const QString folder = QString::fromLocal8Bit(argv[2]);
    optlog::MainWindow window(QString::fromLocal8Bit(argv[3]));
    if (!window.openStudy(QString::fromLocal8Bit(argv[1])))
        return 1;
    window.resize(1680, 900);
    window.show();
    window.watcher()->refresh();
    wait(1500);
    QTableView *table = window.runsView()->table();
    if (table->model()->rowCount() < 2) {
        std::fprintf(stderr, "%s has fewer than two runs\n", argv[1]);
        return 1;
    }
    table->selectAll();
    window.showPage(3);
    optlog::MemoryView *memory = window.memoryView();
    const struct
    {
        const char *name;
        optlog::MemoryView::Step step;
        optlog::MemoryView::Arrangement arrangement;
    } shots[] = {
        {"memory-side-by-side-1680x900.png", optlog::MemoryView::Step::FirstMeasured,
         optlog::MemoryView::Arrangement::SideBySide},
        {"memory-overlaid-1680x900.png", optlog::MemoryView::Step::FirstMeasured,
         optlog::MemoryView::Arrangement::Overlaid},
        {"memory-first-step-1680x900.png", optlog::MemoryView::Step::First, optlog::MemoryView::Arrangement::SideBySide},
    };
    for (const auto &shot : shots) {
        memory->setStep(shot.step);
        memory->setArrangement(shot.arrangement);
        wait(800);
        const QString path = folder + QLatin1Char('/') + QLatin1String(shot.name);
        if (!window.grab().save(path)) {
            std::fprintf(stderr, "cannot write %s\n", qPrintable(path));
            return 1;
        }
        std::printf("%s (drawn in %.1f ms)\n", qPrintable(path), memory->lastDrawMilliseconds());
    }
    return 0;
}
