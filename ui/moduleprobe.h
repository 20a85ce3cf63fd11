// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"
#include "core/memorymodel/memorymodel.h"

#include <QDateTime>
#include <QHash>
#include <QObject>
#include <QProcess>
#include <QString>
#include <QTemporaryFile>
#include <memory>
#include <optional>

namespace optlog {

// The designer's prediction for a TorchScript model (ModelSource::TorchScript): the module's
// probes as the engine cached them (core/memorymodel/probedmemory.h), found by the file's SHA-256;
// and, where that setting was never probed, probing it through the engine binary (`optlog
// estimate`, which probes and caches). The workbench links no LibTorch: only the engine loads the
// module.
class ModuleProbe : public QObject
{
    Q_OBJECT
public:
    // Without an engine binary, nothing is probed from here: only the cache is read.
    explicit ModuleProbe(QString optlogBinary = {}, QObject *parent = nullptr);
    ~ModuleProbe() override;

    // The prediction from the cached probes, or none, with `why` saying what is missing: the file,
    // or probes in this setting (precision mode, checkpointing, device).
    std::optional<MemoryEstimate> cachedEstimate(const RunConfig &config, QString &why);

    bool canProbe() const { return !m_optlog.isEmpty(); }
    bool isProbing() const { return m_process.state() != QProcess::NotRunning; }
    // Starts the engine on `config`'s module; finished() follows. Refused while probing already.
    bool probe(const RunConfig &config);
    // Why the last probe failed, in the engine's words (its contract check, say); empty after success.
    QString lastError() const { return m_error; }

    // planRuns' ModuleCheck for the workbench: asks the engine whether `config`'s module can take it
    // (`optlog estimate --check-applicable`), waiting for the answer (a second or two: LibTorch and
    // the module load). Throws NotApplicable with the engine's reason, InputError when the engine
    // refuses the module or cannot be started.
    void requireApplicable(const RunConfig &config) const;

Q_SIGNALS:
    void finished();

private:
    QString sha256Of(const QString &path, QString &why);

    // A file's SHA-256, kept while its size and modification time stay the same: the designer asks
    // at every edit, and a module can be large.
    struct Digest
    {
        qint64 size = -1;
        QDateTime modified;
        QString sha256;
    };
    QHash<QString, Digest> m_digests; // by path
    QString m_optlog;
    QProcess m_process;
    std::unique_ptr<QTemporaryFile> m_config; // the probed config, as the engine reads it
    QString m_error;
};

} // namespace optlog
