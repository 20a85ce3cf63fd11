// SPDX-License-Identifier: MIT
#include "ui/moduleprobe.h"

#include "core/config/configerror.h"
#include "core/contract/inputerror.h"
#include "core/memorymodel/probedmemory.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <utility>

namespace optlog {

ModuleProbe::ModuleProbe(QString optlogBinary, QObject *parent)
    : QObject(parent)
    , m_optlog(std::move(optlogBinary))
{
    connect(&m_process, &QProcess::finished, this, [this](int exitCode, QProcess::ExitStatus status) {
        // The engine's last line says why it refused (exit 2: the module breaks the contract, say).
        const QStringList said = QString::fromUtf8(m_process.readAllStandardError()).split(u'\n', Qt::SkipEmptyParts);
        m_error = status == QProcess::NormalExit && exitCode == 0
                      ? QString()
                      : (said.isEmpty() ? tr("the engine exited with %1").arg(exitCode) : said.last());
        m_config.reset();
        Q_EMIT finished();
    });
    connect(&m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error != QProcess::FailedToStart)
            return;
        m_error = tr("cannot start %1").arg(m_optlog);
        m_config.reset();
        Q_EMIT finished();
    });
}

ModuleProbe::~ModuleProbe()
{
    if (isProbing()) {
        m_process.disconnect(this); // what would hear of its end is being destroyed too
        m_process.kill();
        m_process.waitForFinished(2000);
    }
}

QString ModuleProbe::sha256Of(const QString &path, QString &why)
{
    const QFileInfo info(path);
    if (!info.isFile()) {
        why = tr("model.path '%1' is not a file: give the TorchScript module's path.").arg(path);
        return {};
    }
    Digest &digest = m_digests[info.absoluteFilePath()];
    if (digest.size == info.size() && digest.modified == info.lastModified())
        return digest.sha256;
    QFile file(path);
    QCryptographicHash hash(QCryptographicHash::Sha256);
    if (!file.open(QIODevice::ReadOnly) || !hash.addData(&file)) {
        why = tr("cannot read model.path '%1': %2").arg(path, file.errorString());
        return {};
    }
    digest = {info.size(), info.lastModified(), QString::fromLatin1(hash.result().toHex())};
    return digest.sha256;
}

std::optional<MemoryEstimate> ModuleProbe::cachedEstimate(const RunConfig &config, QString &why)
{
    const QString sha256 = sha256Of(QString::fromStdString(config.model.path), why);
    if (sha256.isEmpty())
        return std::nullopt;
    const auto probed = readCachedProbes(config, sha256.toStdString());
    if (!probed) {
        why = tr("This module was not probed yet in this setting (%1): its saved activations and "
                 "temporaries come from a few short runs of it in the engine.")
                  .arg(QString::fromStdString(probeSetting(config)));
        return std::nullopt;
    }
    return probedEstimate(config, *probed);
}

bool ModuleProbe::probe(const RunConfig &config)
{
    if (!canProbe() || isProbing())
        return false;
    // The whole config as the engine reads it, so that the probes are of this very setting.
    m_config = std::make_unique<QTemporaryFile>(QDir::tempPath() + QStringLiteral("/optlog-probe-XXXXXX.toml"));
    if (!m_config->open() || m_config->write(QByteArray::fromStdString(toToml(config))) < 0 || !m_config->flush()) {
        m_error = tr("cannot write the config to probe: %1").arg(m_config->errorString());
        m_config.reset();
        return false;
    }
    m_error.clear();
    m_process.start(m_optlog, {QStringLiteral("estimate"), QStringLiteral("--config"), m_config->fileName()});
    return true;
}

void ModuleProbe::requireApplicable(const RunConfig &config) const
{
    QTemporaryFile file(QDir::tempPath() + QStringLiteral("/optlog-check-XXXXXX.toml"));
    if (!file.open() || file.write(QByteArray::fromStdString(toToml(config))) < 0 || !file.flush())
        throw InputError("cannot write the config to check: " + file.errorString().toStdString());
    QProcess engine;
    engine.start(m_optlog, {QStringLiteral("estimate"), QStringLiteral("--check-applicable"),
                            QStringLiteral("--config"), file.fileName()});
    if (!engine.waitForFinished(-1) || engine.exitStatus() != QProcess::NormalExit)
        throw InputError("cannot check " + config.model.path + " with " + m_optlog.toStdString() + ": "
                         + engine.errorString().toStdString());
    const QStringList said = QString::fromUtf8(engine.readAllStandardError()).split(u'\n', Qt::SkipEmptyParts);
    if (engine.exitCode() != 0)
        throw InputError(said.isEmpty() ? "the engine exited with " + std::to_string(engine.exitCode())
                                        : said.last().toStdString());
    const QJsonObject verdict = QJsonDocument::fromJson(engine.readAllStandardOutput()).object();
    if (!verdict.value(QStringLiteral("applicable")).toBool(true))
        throw NotApplicable(verdict.value(QStringLiteral("field")).toString().toStdString(),
                            verdict.value(QStringLiteral("reason")).toString().toStdString());
}

} // namespace optlog
