// SPDX-License-Identifier: MIT
// A screenshot of the Monitor following a run that its own trainer records into the study while
// it trains (`optlog record`, started by the Python module): the workbench did not launch it, and
// says so. Run it under Xvfb (recorded_monitor.sh), while the trainer writes the study.
#include "ui/mainwindow.h"
#include "ui/monitorview.h"
#include "ui/runsview.h"
#include "ui/studywatcher.h"

#include <QApplication>
#include <QDir>
#include <QEventLoop>
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
        std::fprintf(stderr, "usage: %s STUDY(with a run being recorded) OUTPUT.png ENGINE\n", argv[0]);
        return 2;
    }
    optlog::MainWindow window(QString::fromLocal8Bit(argv[3]));
    if (!window.openStudy(QString::fromLocal8Bit(argv[1])))
        return 1;
    window.resize(1280, 800);
    window.show();
    window.watcher()->refresh();
    wait(1500);
    // The study's one run, picked in the Runs list as a person would.
    auto *table = window.runsView()->findChild<QTableView *>();
    if (!table || table->model()->rowCount() == 0) {
        std::fprintf(stderr, "%s has no run to follow\n", argv[1]);
        return 1;
    }
    table->setCurrentIndex(table->model()->index(0, 0));
    window.showPage(1);
    wait(8000); // the watcher reads the file each second: the curves grow as the trainer trains
    if (!window.monitor()->headerText().contains(QStringLiteral("not launched here"))) {
        std::fprintf(stderr, "the Monitor does not show a recorded run: %s\n",
                     qPrintable(window.monitor()->headerText()));
        return 1;
    }
    const QString path = QString::fromLocal8Bit(argv[2]);
    if (!window.grab().save(path)) {
        std::fprintf(stderr, "cannot write %s\n", qPrintable(path));
        return 1;
    }
    std::printf("%s\n", qPrintable(path));
    return 0;
}
