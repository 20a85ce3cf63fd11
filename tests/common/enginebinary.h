// SPDX-License-Identifier: MIT
#pragma once
// The real `optlog` binary (OPTLOG_BINARY) in a process of its own, for the integration tests:
// run to its end, or watched until its run has trained some steps. Links the store and Qt Core.

#include "core/store/store.h"

#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QThread>

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
    process.start(OPTLOG_BINARY, arguments);
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

} // namespace optlog::testing
