// SPDX-License-Identifier: MIT
#pragma once
// The real `optlog` binary (testpaths.h) in a process of its own, for the integration tests:
// run to its end, or watched until its run has trained some steps. Links the store and Qt Core.

#include "core/store/store.h"
#include "tests/common/testpaths.h"

#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QString>
#include <QStringList>
#include <QThread>
#include <csignal>

namespace optlog::testing {

struct Result
{
    int exitCode = -1; // -1: it did not finish in time, or a signal ended it
    QString out;
    QString err;
};

inline Result runOptlog(const QStringList &arguments, int timeoutMs = 120000,
                        const QProcessEnvironment &environment = QProcessEnvironment::systemEnvironment())
{
    QProcess process;
    process.setProcessEnvironment(environment);
    process.start(optlog::testing::optlogBinary(), arguments);
    Result r;
    if (!process.waitForFinished(timeoutMs))
        return r;
    r.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    r.out = QString::fromUtf8(process.readAllStandardOutput());
    r.err = QString::fromUtf8(process.readAllStandardError());
    return r;
}

// Waits until the engine has written `steps` steps of the study's newest run, read as the GUI would.
inline bool waitForSteps(const QString &study, size_t steps, int timeoutMs = 60000)
{
    QElapsedTimer timer;
    timer.start();
    while (timer.elapsed() < timeoutMs) {
        if (QFile::exists(study)) {
            try {
                Store store(study.toStdString(), Store::Access::ReadOnly);
                const auto runs = store.runs();
                if (!runs.empty() && store.metrics(runs.back().id).size() >= steps)
                    return true;
            } catch (const StoreError &) {
                // created but not yet migrated: try again
            }
        }
        QThread::msleep(50);
    }
    return false;
}

// A signal mask (SigBlk, SigCgt, ...) from the text of a /proc/<pid>/status or task status file;
// 0 when it is not there.
inline quint64 signalMask(const QString &statusText, const char *mask)
{
    const QRegularExpressionMatch match = QRegularExpression(QString(mask) + ":\\s*([0-9a-f]+)").match(statusText);
    return match.hasMatch() ? match.captured(1).toULongLong(nullptr, 16) : 0;
}

// Whether the process holds SIGTERM, as optlog's main() does first (holdStopSignals): blocked on its
// main thread and caught, for a library's thread that started earlier. From then on a stop signal is
// optlog's to take, not the default action's, which ends a process still loading its libraries
// (seconds under a sanitizer). Blocked alone is not enough: a library blocks every signal for a
// moment while it starts a thread, before main().
inline bool holdsStopSignals(qint64 pid)
{
    QFile status(QString("/proc/%1/status").arg(pid));
    if (!status.open(QIODevice::ReadOnly))
        return false;
    const QString text = QString::fromLatin1(status.readAll());
    const quint64 term = quint64(1) << (SIGTERM - 1);
    return (signalMask(text, "SigBlk") & term) && (signalMask(text, "SigCgt") & term);
}

// Waits until `process` holds its stop signals; false if it did not within the time.
inline bool waitUntilItHoldsStopSignals(const QProcess &process, int timeoutMs = 60000)
{
    QElapsedTimer timer;
    timer.start();
    while (!holdsStopSignals(process.processId())) {
        if (timer.elapsed() > timeoutMs)
            return false;
        QThread::msleep(20);
    }
    return true;
}

} // namespace optlog::testing
