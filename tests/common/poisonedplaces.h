// SPDX-License-Identifier: MIT
// Studies from someone else: the places a study's remote_runs table may hold that would run a
// command, or make ssh write a file, if they reached ssh or a shell as they are. The fault suite
// (tst_hostile) tries each through the commands that read them, the remote suite (tst_remote)
// through the workbench opening the study. MARKER stands for the file that must never appear.
#pragma once

#include "core/store/remoteruns.h"
#include "core/store/store.h"

#include <QString>
#include <QtTest>

namespace optlog::testing {

inline void addPoisonedPlaces()
{
    QTest::addColumn<QString>("host");
    QTest::addColumn<QString>("optlog");
    QTest::addColumn<QString>("refusal");
    QTest::addColumn<qint64>("remoteRun"); // 0: its start never answered
    QTest::newRow("a host that is an ssh option") << "-oProxyCommand=touch MARKER"
                                                  << "optlog"
                                                  << "which ssh would read as an option" << qint64(1);
    QTest::newRow("a host that names ssh's log file") << "-EMARKER"
                                                      << "optlog"
                                                      << "which ssh would read as an option" << qint64(1);
    QTest::newRow("a host with a newline") << "gpu-box\ntouch MARKER"
                                           << "optlog"
                                           << "is not one word" << qint64(1);
    QTest::newRow("an optlog command holding ;") << "gpu-box"
                                                 << "optlog;touch MARKER"
                                                 << "is not one program" << qint64(1);
    QTest::newRow("an optlog command holding $(...)") << "gpu-box"
                                                      << "$(touch MARKER)"
                                                      << "is not one program" << qint64(1);
    // Its config would train on your host if this machine asked for the start again.
    QTest::newRow("a start asked from another machine, never answered")
        << "gpu-box"
        << "optlog"
        << "was asked from another machine" << qint64(0);
}

// A study at `path` as someone else may have made it: run 1 trained here, run 2 "elsewhere", at
// the place `host` and `optlog` name (MARKER replaced by `marker`) as run `remoteRun` there (0: its
// start never answered), still unfinished.
inline void writePoisonedStudy(const QString &path, QString host, QString optlog, qint64 remoteRun,
                               const QString &marker)
{
    host.replace("MARKER", marker);
    optlog.replace("MARKER", marker);
    Store store(path.toStdString());
    store.createRun("here", "name = 'here'\n");
    RunRecord copy;
    copy.name = "elsewhere";
    copy.configToml = "name = 'elsewhere'\n";
    copy.host = "gpu-box";
    createRemoteRun(store, copy,
                    {host.toStdString(), optlog.toStdString(), "/srv/optlog/hosted/a.sqlite", remoteRun,
                     remoteRun > 0 ? "a.log" : ""},
                    "0123456789abcdef0123456789abcdef");
}

} // namespace optlog::testing
