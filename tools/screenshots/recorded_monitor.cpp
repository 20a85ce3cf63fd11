// SPDX-License-Identifier: MIT
// A screenshot of the Monitor following a run the workbench did not launch, while it trains: one its
// own trainer records into the study (`optlog record`, started by the Python module), or one a
// Slurm task trains into its shard. The header says which (EXPECTED: a part of it). Run it under
// Xvfb (recorded_monitor.sh, cluster_monitor.sh), while the run trains.
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
    if (argc < 4 || argc > 6) {
        std::fprintf(stderr, "usage: %s STUDY(with a run training) OUTPUT.png ENGINE [EXPECTED [WIDTHxHEIGHT]]\n",
                     argv[0]);
        return 2;
    }
    const QString expected = argc >= 5 ? QString::fromLocal8Bit(argv[4]) : QStringLiteral("not launched here");
    // Wider than 1280, the Runs list shows the state column too.
    const QStringList size = (argc == 6 ? QString::fromLocal8Bit(argv[5]) : QStringLiteral("1280x800")).split(u'x');
    optlog::MainWindow window(QString::fromLocal8Bit(argv[3]));
    if (!window.openStudy(QString::fromLocal8Bit(argv[1])))
        return 1;
    window.resize(size.value(0).toInt(), size.value(1).toInt());
    window.show();
    window.watcher()->refresh();
    wait(1500);
    // The study's first run, picked in the Runs list as a person would.
    auto *table = window.runsView()->findChild<QTableView *>();
    if (!table || table->model()->rowCount() == 0) {
        std::fprintf(stderr, "%s has no run to follow\n", argv[1]);
        return 1;
    }
    table->setCurrentIndex(table->model()->index(0, 0));
    window.showPage(1);
    wait(8000); // the watcher reads the file each second: the curves grow as the trainer trains
    if (!window.monitor()->headerText().contains(expected)) {
        std::fprintf(stderr, "the Monitor's header does not say \"%s\": %s\n", qPrintable(expected),
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
