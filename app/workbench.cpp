// SPDX-License-Identifier: MIT
// optlog-workbench: the desktop GUI over one study file. Never links LibTorch: each run is an
// `optlog run` engine process.
#include "core/config/studyplan.h"
#include "core/contract/format.h"
#include "optlog_version.h"
#include "ui/mainwindow.h"
#include "ui/runqueue.h"

#include <QApplication>
#include <QByteArray>
#include <QCommandLineParser>
#include <QSettings>
#include <algorithm>
#include <cstdio>

// The study argument's help, in --help and in the manual page.
static const QString kStudyHelp = QStringLiteral("study file to open (created when missing); default: the last one, or "
                                                 "a default study on first start");

namespace {

QString roff(const QString &text)
{
    return QString::fromStdString(optlog::roffText(text.toStdString()));
}

// optlog-workbench(1) from the parser's own definitions, for the build (`--man-page DATE`).
QString manPage(const QString &description, const QList<QCommandLineOption> &options, const QString &date)
{
    QString page = QStringLiteral(".TH OPTLOG-WORKBENCH 1 \"%1\" \"optlog %2 (%3)\" \"User Commands\"\n")
                       .arg(date, QStringLiteral(OPTLOG_VERSION), roff(QStringLiteral(OPTLOG_GIT_DESCRIBE)));
    page += QStringLiteral(".SH NAME\noptlog\\-workbench \\- ") + roff(description) + QStringLiteral("\n");
    // "--queue plan": how the option is written, with its value.
    const auto written = [](const QCommandLineOption &option) {
        return roff(QStringLiteral("--") + option.names().constLast()
                    + (option.valueName().isEmpty() ? QString() : QStringLiteral(" ") + option.valueName()));
    };
    page += QStringLiteral(".SH SYNOPSIS\n.B optlog\\-workbench\n[study]");
    for (const QCommandLineOption &option : options)
        page += QStringLiteral("\n[") + written(option) + QStringLiteral("]");
    page += QStringLiteral("\n.SH OPTIONS\n.TP\n.B study\n") + roff(kStudyHelp) + QStringLiteral("\n");
    for (const QCommandLineOption &option : options)
        page += QStringLiteral(".TP\n.B ") + written(option) + QStringLiteral("\n") + roff(option.description())
                + QStringLiteral("\n");
    page += QStringLiteral(
        ".SH FILES\nThe last studies opened are remembered in the Qt settings of \\fIoptlog\\fR; the "
        "first start opens \\fI$XDG_DATA_HOME/optlog/default.sqlite\\fR.\n"
        ".SH SEE ALSO\n.BR optlog (1)\n");
    return page;
}

} // namespace

int main(int argc, char **argv)
{
    const QString description = QStringLiteral("optlog workbench: design, run, watch and compare training runs");
    const QCommandLineOption queue(QStringLiteral("queue"),
                                   QStringLiteral("queue the runs of this study plan not yet completed"),
                                   QStringLiteral("plan"));
    const QCommandLineOption start(QStringLiteral("start"), QStringLiteral("start the queue at once"));
    const QCommandLineOption help(QStringList{QStringLiteral("h"), QStringLiteral("help")},
                                  QStringLiteral("show the options and exit"));
    const QCommandLineOption version(QStringList{QStringLiteral("v"), QStringLiteral("version")},
                                     QStringLiteral("show the version and exit"));
    // Internal, for the build: the manual page, written before a window system is needed.
    if (argc == 3 && QByteArray(argv[1]) == "--man-page") {
        std::fputs(manPage(description, {queue, start, help, version}, QString::fromUtf8(argv[2])).toUtf8().constData(),
                   stdout);
        return 0;
    }
    // Without a display Qt's platform plugin aborts; say what is missing instead. --help and
    // --version need no window: they are answered offscreen.
    if (qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY")
        && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
        const QStringList arguments = [&] {
            QStringList list;
            for (int i = 1; i < argc; ++i)
                list << QString::fromLocal8Bit(argv[i]);
            return list;
        }();
        const bool answersOnly = std::any_of(arguments.begin(), arguments.end(), [](const QString &a) {
            return a == QLatin1String("-h") || a == QLatin1String("--help") || a == QLatin1String("-v")
                   || a == QLatin1String("--version") || a == QLatin1String("--help-all");
        });
        if (!answersOnly && !arguments.contains(QLatin1String("-platform"))) {
            std::fputs("optlog-workbench: no display (DISPLAY and WAYLAND_DISPLAY are not set); run it in a desktop "
                       "session, under xvfb-run, or with QT_QPA_PLATFORM=offscreen. `optlog study` runs a study "
                       "without a window.\n",
                       stderr);
            return 2;
        }
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("optlog"));
    QApplication::setApplicationName(QStringLiteral("optlog"));
    QApplication::setApplicationDisplayName(QStringLiteral("optlog"));
    QApplication::setApplicationVersion(QStringLiteral(OPTLOG_VERSION));
    qRegisterMetaType<QList<optlog::PlannedRun>>();

    QCommandLineParser parser;
    parser.setApplicationDescription(description);
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("study"), kStudyHelp);
    parser.addOption(queue);
    parser.addOption(start);
    parser.process(app);

    optlog::MainWindow window(optlog::RunQueue::defaultOptlogBinary());
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
