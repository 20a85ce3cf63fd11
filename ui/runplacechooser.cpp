// SPDX-License-Identifier: MIT
#include "ui/runplacechooser.h"

#include "core/contract/program.h"
#include "core/remote/hostlist.h"
#include "ui/addhostdialog.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QVBoxLayout>

namespace optlog {

namespace {

// The combo's data for each entry: the destination, "" for this machine, kSlurm or kAddHost.
const QString kSlurm = QStringLiteral("\x01slurm");
const QString kAddHost = QStringLiteral("\x01add");

QString dataOf(const RunPlace &place)
{
    switch (place.kind) {
    case RunPlace::Kind::Here: return {};
    case RunPlace::Kind::Host: return place.host;
    case RunPlace::Kind::Slurm: return kSlurm;
    }
    return {};
}

// An entry the user can pick: "This machine" is shown but not offered where no engine trains here.
bool offered(const QComboBox &places, int index)
{
    return index >= 0 && (places.model()->flags(places.model()->index(index, 0)) & Qt::ItemIsEnabled);
}

} // namespace

RunPlaceChooser::RunPlaceChooser(QString optlogBinary, QWidget *parent)
    : QWidget(parent)
    , m_optlog(std::move(optlogBinary))
    , m_places(new QComboBox)
    , m_state(new QLabel)
{
    m_places->setObjectName(QStringLiteral("runPlace"));
    m_places->setToolTip(tr("Where the queue's runs train: this machine; a Slurm cluster, the whole queue one job "
                            "array (docs/cluster.md); or another machine reached over SSH, whose rows come back "
                            "into this study as it trains (docs/remote.md)"));
    m_state->setObjectName(QStringLiteral("runPlaceState"));
    m_state->setWordWrap(true);
    auto *row = new QHBoxLayout;
    row->addWidget(new QLabel(tr("Run on:")));
    row->addWidget(m_places, 1);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(row);
    layout->addWidget(m_state);
    reloadPlaces({});
    connect(m_places, &QComboBox::activated, this, [this] {
        if (m_places->currentData().toString() != kAddHost) {
            m_previous = place();
            Q_EMIT placeChanged(place());
            return;
        }
        AddHostDialog dialog(this);
        const bool ok = dialog.exec() == QDialog::Accepted;
        reloadPlaces(m_previous);
        if (ok && !dialog.destination().isEmpty())
            addHost(dialog.destination(), dialog.python());
    });
    connect(&m_check, &QProcess::finished, this, [this](int exitCode, QProcess::ExitStatus status) {
        const bool ok = status == QProcess::NormalExit && exitCode == 0;
        const QString said = QString::fromUtf8(ok ? m_check.readAllStandardOutput() : m_check.readAllStandardError())
                                 .trimmed();
        m_places->setEnabled(true);
        m_state->setText(ok ? QString() : said);
        if (ok) {
            m_previous = RunPlace::onHost(m_checking);
            reloadPlaces(m_previous);
            Q_EMIT placeChanged(place());
        }
        Q_EMIT checked(m_checking, ok, said);
    });
    connect(&m_check, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error != QProcess::FailedToStart)
            return;
        m_places->setEnabled(true);
        m_state->setText(tr("cannot start %1: %2").arg(m_optlog, m_check.errorString()));
        Q_EMIT checked(m_checking, false, m_state->text());
    });
}

RunPlace RunPlaceChooser::place() const
{
    const QString data = m_places->currentData().toString();
    if (data == kSlurm)
        return RunPlace::onSlurm();
    return data.isEmpty() || data == kAddHost ? RunPlace::here() : RunPlace::onHost(data);
}

bool RunPlaceChooser::choose(const RunPlace &place)
{
    const int index = m_places->findData(dataOf(place));
    if (!offered(*m_places, index) || isChecking())
        return false;
    m_places->setCurrentIndex(index);
    m_previous = place;
    Q_EMIT placeChanged(place);
    return true;
}

void RunPlaceChooser::addHost(const QString &destination, const QString &python)
{
    if (isChecking())
        return;
    m_checking = destination;
    m_places->setEnabled(false);
    if (python.isEmpty()) {
        m_state->setText(tr("checking %1 over SSH…").arg(destination));
        m_check.start(m_optlog, {QStringLiteral("host"), QStringLiteral("check"), destination});
        return;
    }
    m_state->setText(
        tr("installing optlog on %1 for the torch of %2 (a build there takes minutes)…").arg(destination, python));
    m_check.start(m_optlog,
                  {QStringLiteral("host"), QStringLiteral("setup"), destination, QStringLiteral("--python"), python});
}

void RunPlaceChooser::reloadPlaces(const RunPlace &choose)
{
    m_places->clear();
    // Without optlog-engine (the `optlog` package alone: a laptop) this machine cannot train: it
    // is shown, not offered, and the line below says why.
    const bool trainsHere = !installedEngine(m_optlog.toStdString()).empty();
    m_places->addItem(trainsHere ? tr("This machine") : tr("This machine (no engine here)"), QString());
    if (!trainsHere) {
        static_cast<QStandardItemModel *>(m_places->model())->item(0)->setEnabled(false);
        m_state->setText(tr("This machine has no optlog-engine, which trains with LibTorch: runs go to a host "
                            "(Add a host…), or install the package optlog-engine to train here."));
    }
    if (!QStandardPaths::findExecutable(QStringLiteral("sbatch")).isEmpty())
        m_places->addItem(tr("A Slurm cluster (sbatch)"), kSlurm);
    for (const HostEntry &host : rememberedHosts())
        m_places->addItem(QString::fromStdString(host.name), QString::fromStdString(host.name));
    m_places->addItem(tr("Add a host…"), kAddHost);
    int index = m_places->findData(dataOf(choose));
    if (!offered(*m_places, index))
        index = trainsHere || m_places->count() == 2 ? 0 : 1; // the first place that trains, if any
    m_places->setCurrentIndex(index);
}

} // namespace optlog
