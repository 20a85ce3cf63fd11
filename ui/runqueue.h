// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/studyplan.h"
#include "core/contract/engineevents.h"
#include "ui/runplace.h"

#include <QList>
#include <QMetaType>
#include <QObject>
#include <QProcess>
#include <QString>
#include <QTemporaryFile>
#include <QTimer>

namespace optlog {

// A run waiting for, or taking, the engine. Once the engine has created the run in the study,
// the study file is its record and the entry leaves the queue.
struct QueueEntry
{
    enum class State {
        Queued,
        Running,
        Failed, // the engine refused it before creating the run
    };
    static QString stateName(State state); // "queued", "running", "failed"

    int id = 0; // unique within this queue
    PlannedRun run;
    State state = State::Queued;
    QString message; // why it failed: the engine's own words
};

// Runs the queued runs one at a time, each as an `optlog run` engine process: two runs at once
// would distort each other's throughput and memory. Reads the engine's JSON-lines events as
// they come; cancelling asks the engine to stop after its step (SIGTERM) and kills it only
// after a grace period. On a host (setPlace), each run trains there and `optlog run --host`
// follows it back, its events the same; cancelling is then `optlog cancel` of the run there, and
// closing the workbench stops only the following (the run goes on; reopening follows it again).
// On Slurm, Start hands every queued run at once to `optlog study --scheduler slurm` as one plan
// (one job array): they leave the queue as the study's tasks on the cluster, which the runs list
// shows, cancels and gathers (docs/cluster.md).
class RunQueue : public QObject
{
    Q_OBJECT
public:
    explicit RunQueue(QString optlogBinary, QObject *parent = nullptr);
    ~RunQueue() override;

    // $OPTLOG (or its old name, $OPTLOG_ENGINE), else the `optlog` binary beside this executable.
    static QString defaultOptlogBinary();

    // Switching studies drops queued runs of the old one; refused while a run is going.
    bool setStudy(const QString &studyPath);
    QString study() const { return m_study; }
    // Where the next runs train (a host `optlog host check`ed).
    void setPlace(const RunPlace &place) { m_place = place; }
    RunPlace place() const { return m_place; }
    // Where the running engine (or submission) works; meaningful while isRunning().
    RunPlace runningPlace() const { return m_running; }

    int enqueue(const PlannedRun &run);
    void remove(int entryId); // a queued or failed entry; the running one is cancelled instead
    QList<QueueEntry> entries() const { return m_entries; }

    void start(); // runs entries until the queue is empty or paused
    void pause(); // the running run finishes; nothing new starts
    void cancelRunning();
    bool isActive() const { return m_active; }
    bool isRunning() const { return m_process.state() != QProcess::NotRunning; }
    qint64 runningPid() const { return m_process.processId(); }

Q_SIGNALS:
    void entriesChanged();
    void activeChanged(bool active);
    void engineEvent(const optlog::EngineEvent &event); // one JSON line of the running engine, parsed
    // outcome: an Outcome's name (outcomeName), or "refused" when the engine refused the input
    // before it created a run
    void runFinished(const QString &name, const QString &outcome, const QString &message);
    // A line the engine's launcher wrote on stderr before the run began ("optlog: this machine has
    // no tuning for fp32; probing ..."): what a person waiting for the first step wants to read.
    void launcherSaid(const QString &line);
    // What the follower of a run on a host said, without its prefix (followerText): "run 3:
    // connection to gpu-box lost, reconnecting; last row at step 812".
    void followerSaid(const QString &line);
    // The queued runs went to Slurm: what `optlog study` said ("submitted 2 runs to Slurm as job
    // 12"). A refused submission is each run's runFinished(…, "refused", why) instead.
    void submitted(const QString &said);

private:
    void startNext();
    void submitToSlurm();
    void onSubmitted(int exitCode, QProcess::ExitStatus status);
    void onStdout();
    void onFinished(int exitCode, QProcess::ExitStatus status);
    QueueEntry *runningEntry();
    // Where the stored run `runId` of the study trained: its host, else here.
    RunPlace placeOfStoredRun(const std::string &runId) const;

    QString m_optlog;
    QString m_study;
    QList<QueueEntry> m_entries;
    int m_nextId = 1;
    bool m_active = false;
    bool m_runCreated = false; // the engine's "started" event arrived: the study holds the run
    int64_t m_runId = 0;       // the running run's id in the study, once it exists
    RunPlace m_place;          // where the next runs train
    RunPlace m_running;        // where the running one trains
    QTemporaryFile m_plan;     // the plan handed to Slurm, while `optlog study` submits it
    QProcess m_hostCancel;     // `optlog cancel STUDY RUN` of a run on a host
    QByteArray m_stdoutBuffer;
    QByteArray m_stderrTail;
    QProcess m_process;
    QTimer m_grace;
};

} // namespace optlog

Q_DECLARE_METATYPE(optlog::EngineEvent)
