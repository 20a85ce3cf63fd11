// SPDX-License-Identifier: MIT
// optlog-workbench: the desktop GUI over one study file. Never links LibTorch: each run is an
// `optlog run` engine process.
#include "core/config/studyplan.h"
#include "optlog_version.h"
#include "ui/mainwindow.h"
#include "ui/runqueue.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QSettings>

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("optlog"));
    QApplication::setApplicationName(QStringLiteral("optlog"));
    QApplication::setApplicationDisplayName(QStringLiteral("optlog"));
    QApplication::setApplicationVersion(QStringLiteral(OPTLOG_VERSION));
    qRegisterMetaType<QList<optlog::PlannedRun>>();

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("optlog workbench: design, run, watch and compare training runs"));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("study"),
                                 QStringLiteral("study file to open (created when missing); default: the last one, "
                                                "or a default study on first start"));
    const QCommandLineOption queue(QStringLiteral("queue"),
                                   QStringLiteral("queue the runs of this study plan not yet completed"),
                                   QStringLiteral("plan"));
    const QCommandLineOption start(QStringLiteral("start"), QStringLiteral("start the queue at once"));
    parser.addOption(queue);
    parser.addOption(start);
    parser.process(app);

    optlog::MainWindow window(optlog::RunQueue::defaultEngineBinary());
    const QStringList recent = QSettings().value(QStringLiteral("recentStudies")).toStringList();
    const bool firstStart = parser.positionalArguments().isEmpty() && recent.isEmpty();
    QString study = parser.positionalArguments().value(0);
    if (study.isEmpty())
        study = firstStart ? optlog::MainWindow::defaultStudyPath() : recent.first();
    if (!window.openStudy(study) && !window.openStudy(optlog::MainWindow::defaultStudyPath()))
        return 2;
    if (parser.isSet(queue))
        window.queuePlan(parser.value(queue));
    else if (firstStart)
        window.queuePlan(QStringLiteral("optimization-log")); // useful at once: the seed's log, ready to start
    if (parser.isSet(start))
        window.queue()->start();
    window.show();
    return app.exec();
}
