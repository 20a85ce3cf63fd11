// SPDX-License-Identifier: MIT
#pragma once

#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>

namespace optlog {

// Whether this machine is tuned for each precision family, and tuning it, through the engine
// binary: `optlog tune --status` and `optlog tune`. Untuned, a run's first start makes a quick
// probe (under a minute of short runs); `optlog tune` measures in rounds, a few minutes here, and every
// speed in a study depends on it as much as on a technique (docs/tuning.md).
class MachineTuning : public QObject
{
    Q_OBJECT
public:
    explicit MachineTuning(QString optlogBinary, QObject *parent = nullptr);
    ~MachineTuning() override;

    void refresh(); // asks the engine again; changed() follows
    // Starts `optlog tune` with `arguments` added (none: both families, its default rounds).
    // Refused while tuning already.
    bool tune(const QStringList &arguments = {});
    bool isTuning() const { return m_tune.state() != QProcess::NotRunning; }

    // One line per family, as the engine says it ("fp32: tuned by optlog tune: 2 threads, ACTIVE",
    // "bf16: not tuned on this machine"); empty until the first answer.
    QStringList families() const { return m_families; }
    // Every family tuned by `optlog tune` itself, not only probed.
    bool fullyTuned() const;
    // What a person reads in the status bar, progress included while tuning.
    QString summary() const;

Q_SIGNALS:
    void changed();

private:
    QString m_optlog;
    QProcess m_status;
    QProcess m_tune;
    QStringList m_families;
    QString m_progress; // the tuning's last line, or why it failed
};

} // namespace optlog
