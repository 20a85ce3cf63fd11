// SPDX-License-Identifier: MIT
// optlog-workbench: the desktop GUI over one study file. Never links LibTorch: each run is an
// `optlog run` engine process.
#include "core/config/studyplan.h"
#include "optlog_version.h"
#include "ui/mainwindow.h"
#include "ui/runqueue.h"

#include <QApplication>
#include <QByteArray>
#include <QCommandLineParser>
#include <QSettings>

#include <cstdio>

// The study argument's help, in --help and in the manual page.
static const QString kStudyHelp = QStringLiteral("study file to open (created when missing); default: the last one, or "
                                                 "a default study on first start");

namespace {

// Text safe in roff: a backslash, a hyphen and a leading dot are its own.
QString roff(QString text)
{
    text.replace(QLatin1Char('\\'), QStringLiteral("\\e")).replace(QLatin1Char('-'), QStringLiteral("\\-"));
    return text.startsWith(QLatin1Char('.')) ? QStringLiteral("\\&") + text : text;
}

// optlog-workbench(1) from the parser's own definitions, for the build (`--man-page DATE`).
QString manPage(const QString &description, const QList<QCommandLineOption> &options, const QString &date)
{
    QString page = QStringLiteral(".TH OPTLOG-WORKBENCH 1 \"%1\" \"optlog %2 (%3)\" \"User Commands\"\n")
                       .arg(date, QStringLiteral(OPTLOG_VERSION), roff(QStringLiteral(OPTLOG_GIT_DESCRIBE)));
    page += QStringLiteral(".SH NAME\noptlog\\-workbench \\- ") + roff(description) + QStringLiteral("\n");
    page += QStringLiteral(".SH SYNOPSIS\n.B optlog\\-workbench\n[study]");
    for (const QCommandLineOption &option : options)
        page += QStringLiteral("\n[") + roff(QStringLiteral("--") + option.names().constLast())
                + (option.valueName().isEmpty() ? QString() : QStringLiteral(" ") + option.valueName()) + QStringLiteral("]");
    page += QStringLiteral("\n.SH OPTIONS\n.TP\n.B study\n") + roff(kStudyHelp) + QStringLiteral("\n");
    for (const QCommandLineOption &option : options)
        page += QStringLiteral(".TP\n.B ") + roff(QStringLiteral("--") + option.names().constLast())
                + (option.valueName().isEmpty() ? QString() : QStringLiteral(" ") + option.valueName())
                + QStringLiteral("\n") + roff(option.description()) + QStringLiteral("\n");
    page += QStringLiteral(".SH FILES\nThe last studies opened are remembered in the Qt settings of \\fIoptlog\\fR; the "
                           "first start opens \\fI$XDG_DATA_HOME/optlog/optlog/default.sqlite\\fR.\n"
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
