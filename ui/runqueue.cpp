// SPDX-License-Identifier: MIT
#include "ui/runqueue.h"

#include "core/contract/rowlookup.h"
#include "core/remote/hostprotocol.h"
#include "core/store/remoteruns.h"
#include "core/store/store.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>

namespace optlog {

namespace {

// The outcome runFinished() reports for a run the engine never created.
constexpr char kRefused[] = "refused";

// What the engine's exit code says: the run's outcome, or that it refused the input.
QString outcomeOfExit(int exitCode)
{
    const std::optional<Outcome> outcome = outcomeForExitCode(exitCode);
    return QString::fromLatin1(outcome ? outcomeName(*outcome) : kRefused);
}

QString lastLine(const QByteArray &text)
{
    const QStringList lines = QString::fromUtf8(text).split(QRegularExpression(QStringLiteral("[\r\n]")),
                                                            Qt::SkipEmptyParts);
    return lines.isEmpty() ? QString() : lines.last().trimmed();
}

} // namespace

QString QueueEntry::stateName(State state)
{
    static constexpr Named<State> names[] = {{State::Queued, "queued"},
                                             {State::Running, "running"},
                                             {State::Failed, "failed"}};
    return QString::fromLatin1(nameIn(names, state));
}

RunQueue::RunQueue(QString optlogBinary, QObject *parent)
    : QObject(parent)
    , m_optlog(std::move(optlogBinary))
{
    m_grace.setSingleShot(true);
    m_grace.setInterval(10000);
    connect(&m_grace, &QTimer::timeout, this, [this] {
        if (isRunning())
            m_process.kill(); // the engine ignored SIGTERM for the whole grace period
    });
    connect(&m_process, &QProcess::readyReadStandardOutput, this, &RunQueue::onStdout);
    connect(&m_process, &QProcess::readyReadStandardError, this, [this] {
        const QByteArray said = m_process.readAllStandardError();
        for (const QByteArray &line : said.split('\n')) {
            if (!m_runCreated && line.startsWith("optlog: "))
                Q_EMIT launcherSaid(QString::fromUtf8(line.trimmed()));
            if (const auto text = followerText(line.trimmed().toStdString()))
                Q_EMIT followerSaid(QString::fromStdString(*text));
        }
        m_stderrTail += said;
        m_stderrTail = m_stderrTail.right(4096);
    });
    connect(&m_process, &QProcess::finished, this, &RunQueue::onFinished);
    connect(&m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart)
            onFinished(-1, QProcess::CrashExit);
    });
}

RunQueue::~RunQueue()
{
    if (isRunning()) {
        // Closing the workbench must not leave an engine training unseen. Its end is not reported:
        // whoever would hear of it (the main window's views) is being destroyed too.
        m_process.disconnect(this);
        m_process.terminate();
        if (!m_process.waitForFinished(3000))
            m_process.kill();
        m_process.waitForFinished(1000);
    }
}

QString RunQueue::defaultOptlogBinary()
{
    // OPTLOG, as for the Python module; OPTLOG_ENGINE, its old name, for one release more (docs/environment.md).
    for (const char *name : {"OPTLOG", "OPTLOG_ENGINE"})
        if (const QString fromEnvironment = qEnvironmentVariable(name); !fromEnvironment.isEmpty())
            return fromEnvironment;
    return QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("optlog"));
}

bool RunQueue::setStudy(const QString &studyPath)
{
    if (isRunning())
        return false;
    if (studyPath != m_study) {
        m_entries.clear();
        m_study = studyPath;
        Q_EMIT entriesChanged();
    }
    return true;
}

int RunQueue::enqueue(const PlannedRun &run)
{
    QueueEntry entry;
    entry.id = m_nextId++;
    entry.run = run;
    entry.state = QueueEntry::State::Queued;
    m_entries.append(entry);
    Q_EMIT entriesChanged();
    if (m_active && !isRunning())
        startNext();
    return entry.id;
}

void RunQueue::remove(int entryId)
{
    for (int i = 0; i < m_entries.size(); ++i) {
        if (m_entries[i].id != entryId)
            continue;
        if (m_entries[i].state == QueueEntry::State::Running)
            return cancelRunning();
        m_entries.removeAt(i);
        Q_EMIT entriesChanged();
        return;
    }
}

void RunQueue::start()
{
    if (!m_active) {
        m_active = true;
        Q_EMIT activeChanged(true);
    }
    if (!isRunning())
        startNext();
}

void RunQueue::pause()
{
    if (m_active) {
        m_active = false;
        Q_EMIT activeChanged(false);
    }
}

void RunQueue::cancelRunning()
{
    if (!isRunning())
        return;
    if (m_running.kind == RunPlace::Kind::Slurm)
        return m_process.terminate(); // a submission: sbatch's job, if any, is cancelled by optlog study
    if (m_running.kind == RunPlace::Kind::Host) {
        // The engine is on the host: asked to stop there; its end comes back through the follower.
        // Before the run exists there is nothing to cancel but the start, which stops here.
        if (m_runId == 0)
            return m_process.terminate();
        if (m_hostCancel.state() == QProcess::NotRunning)
            m_hostCancel.start(m_optlog, {QStringLiteral("cancel"), m_study, QString::number(m_runId)});
        return;
    }
    m_process.terminate();
    m_grace.start();
}

RunPlace RunQueue::placeOfStoredRun(const std::string &runId) const
{
    try {
        const Store study(m_study.toStdString(), Store::Access::ReadOnly);
        if (const std::optional<RemotePlace> place = remotePlace(study, std::stoll(runId)))
            return RunPlace::onHost(QString::fromStdString(place->host));
    } catch (const std::exception &) { // the engine refuses it, saying why
    }
    return RunPlace::here();
}

QueueEntry *RunQueue::runningEntry()
{
    for (auto &entry : m_entries)
        if (entry.state == QueueEntry::State::Running)
            return &entry;
    return nullptr;
}

void RunQueue::startNext()
{
    if (isRunning() || m_study.isEmpty())
        return;
    QueueEntry *next = nullptr;
    for (auto &entry : m_entries) {
        if (entry.state == QueueEntry::State::Queued) {
            next = &entry;
            break;
        }
    }
    if (!next) {
        pause(); // the queue ran dry: a later enqueue waits for Start again
        return;
    }
    m_running = next->run.resume.empty() ? m_place : placeOfStoredRun(next->run.resume);
    if (m_running.kind == RunPlace::Kind::Slurm)
        return submitToSlurm();
    next->state = QueueEntry::State::Running;
    m_runCreated = false;
    m_runId = 0;
    m_stdoutBuffer.clear();
    m_stderrTail.clear();
    QStringList arguments;
    for (const std::string &argument : runArguments(next->run, m_study.toStdString()))
        arguments << QString::fromStdString(argument);
    arguments << QStringLiteral("--jsonl");                                 // the events the monitor reads
    if (m_running.kind == RunPlace::Kind::Host && next->run.resume.empty()) // a resumed one knows its host
        arguments << QStringLiteral("--host") << m_running.host;
    m_process.start(m_optlog, arguments);
    Q_EMIT entriesChanged(); // after start(): listeners see isRunning()
}

void RunQueue::submitToSlurm()
{
    StudyPlan plan;
    plan.name = QFileInfo(m_study).completeBaseName().toStdString() + " queue";
    for (auto &entry : m_entries) {
        if (entry.state != QueueEntry::State::Queued || !entry.run.resume.empty()) // a resume goes where it ran
            continue;
        entry.state = QueueEntry::State::Running;
        plan.runs.push_back(entry.run);
    }
    plan.baseline = plan.runs.front().name;
    m_stdoutBuffer.clear();
    m_stderrTail.clear();
    m_plan.setFileTemplate(QDir::temp().filePath(QStringLiteral("optlog-queue-XXXXXX.toml")));
    if (!m_plan.open() || m_plan.write(QByteArray::fromStdString(studyPlanToml(plan))) < 0 || !m_plan.flush()) {
        m_stderrTail = tr("cannot write the plan for Slurm: %1").arg(m_plan.errorString()).toUtf8();
        m_plan.close();
        return onSubmitted(-1, QProcess::NormalExit);
    }
    m_plan.close();
    m_process.start(m_optlog, {QStringLiteral("study"), m_plan.fileName(), QStringLiteral("--db"), m_study,
                               QStringLiteral("--scheduler"), QStringLiteral("slurm")});
    Q_EMIT entriesChanged(); // after start(): listeners see isRunning()
}

void RunQueue::onSubmitted(int exitCode, QProcess::ExitStatus status)
{
    if (!runningEntry())
        return;      // FailedToStart and finished can both report one failure
    m_plan.remove(); // the study keeps its text with the job
    QString said;
    for (const QString &line : QString::fromUtf8(m_stderrTail).split(QLatin1Char('\n'), Qt::SkipEmptyParts))
        if (line.contains(QLatin1String("submitted ")) || line.contains(QLatin1String("nothing to submit")))
            said = QString(line).remove(QStringLiteral("optlog study: ")).trimmed();
    const bool ok = status == QProcess::NormalExit && exitCode == 0;
    QString message = lastLine(m_stderrTail);
    if (status == QProcess::CrashExit && m_process.error() == QProcess::FailedToStart)
        message = tr("cannot start %1: %2").arg(m_optlog, m_process.errorString());
    QStringList refused;
    for (auto &entry : m_entries) {
        if (entry.state != QueueEntry::State::Running)
            continue;
        if (!ok) {
            entry.state = QueueEntry::State::Failed;
            entry.message = message.isEmpty() ? tr("the submission to Slurm ended with %1").arg(exitCode) : message;
            refused << QString::fromStdString(entry.run.name);
        }
    }
    m_entries.removeIf([](const QueueEntry &e) { return e.state == QueueEntry::State::Running; });
    Q_EMIT entriesChanged();
    if (ok)
        Q_EMIT submitted(said.isEmpty() ? lastLine(m_stderrTail) : said);
    for (const QString &name : refused)
        Q_EMIT runFinished(name, QString::fromLatin1(kRefused), message);
    pause(); // the queue was handed over whole
}

void RunQueue::onStdout()
{
    m_stdoutBuffer += m_process.readAllStandardOutput();
    qsizetype newline;
    while ((newline = m_stdoutBuffer.indexOf('\n')) >= 0) {
        const QByteArray line = m_stdoutBuffer.left(newline);
        m_stdoutBuffer.remove(0, newline + 1);
        const ParsedEvent parsed = parseEngineEvent(line.toStdString());
        if (!parsed.event)
            continue; // not an event: a library that printed on the engine's stdout
        if (std::holds_alternative<RunStarted>(parsed.event->body))
            m_runCreated = true;
        if (parsed.event->run > 0)
            m_runId = parsed.event->run;
        Q_EMIT engineEvent(*parsed.event);
    }
}

void RunQueue::onFinished(int exitCode, QProcess::ExitStatus status)
{
    m_grace.stop();
    if (m_running.kind == RunPlace::Kind::Slurm)
        return onSubmitted(exitCode, status);
    QueueEntry *entry = runningEntry();
    if (!entry)
        return; // FailedToStart and finished can both report one failure
    onStdout();
    QString outcome = status == QProcess::CrashExit ? QString::fromLatin1(outcomeName(Outcome::Crashed))
                                                    : outcomeOfExit(exitCode);
    QString message = lastLine(m_stderrTail);
    if (status == QProcess::CrashExit && m_process.error() == QProcess::FailedToStart) {
        outcome = QString::fromLatin1(kRefused);
        message = tr("cannot start %1: %2").arg(m_optlog, m_process.errorString());
    } else if (status == QProcess::CrashExit) {
        // The engine could not record its own end: the study marks the run whose process is gone.
        try {
            Store(m_study.toStdString(), Store::Access::ReadWrite).markCrashedRuns();
        } catch (const std::exception &e) {
            message = QString::fromStdString(e.what());
        }
    }
    const QString name = QString::fromStdString(entry->run.name);
    if (m_runCreated) {
        m_entries.removeIf([id = entry->id](const QueueEntry &e) { return e.id == id; });
    } else {
        entry->state = QueueEntry::State::Failed;
        entry->message = message.isEmpty() ? tr("the engine stopped before creating the run (%1)").arg(outcome)
                                           : message;
        message = entry->message;
    }
    Q_EMIT entriesChanged();
    Q_EMIT runFinished(name, outcome, message);
    if (m_active)
        startNext();
}

} // namespace optlog
