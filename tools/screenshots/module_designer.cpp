// SPDX-License-Identifier: MIT
// Screenshots of the Design page on a TorchScript module (docs/torchscript.md): first as a user meets
// a module never probed in the designed setting, with the "Probe the module" button; then after
// that button ran the engine's probes, with the prediction by role. Run it under Xvfb
// (module_designer.sh).
#include "ui/designerview.h"
#include "ui/mainwindow.h"

#include <QApplication>
#include <QDir>
#include <QEventLoop>
#include <QPushButton>
#include <QSettings>
#include <QStandardPaths>
#include <QTimer>
#include <cstdio>

namespace {

// False after saying why: a missing screenshot must fail the script, not pass unnoticed.
bool save(QWidget *window, const QString &path)
{
    QEventLoop settle;
    QTimer::singleShot(300, &settle, &QEventLoop::quit);
    settle.exec();
    if (!window->grab().save(path)) {
        std::fprintf(stderr, "cannot write %s\n", qPrintable(path));
        return false;
    }
    std::printf("%s\n", qPrintable(path));
    return true;
}

} // namespace

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    QStandardPaths::setTestModeEnabled(true); // leave the user's settings and recent files alone
    QSettings().clear();
    if (argc != 5) {
        std::fprintf(stderr, "usage: %s MODULE.pt ENGINE UNPROBED.png PROBED.png\n", argv[0]);
        return 2;
    }
    optlog::MainWindow window(QString::fromLocal8Bit(argv[2]));
    window.resize(1280, 800);
    window.show();
    window.showPage(0);
    optlog::DesignerView *designer = window.designer();
    designer->setPreset(QStringLiteral("default"));
    designer->setRunName(QStringLiteral("my-module-bf16"));
    const QList<std::pair<QString, QString>> fields = {{QStringLiteral("model.source"), QStringLiteral("torchscript")},
                                                       {QStringLiteral("model.path"), QString::fromLocal8Bit(argv[1])},
                                                       {QStringLiteral("precision.mode"),
                                                        QStringLiteral("autocast-bf16")},
                                                       {QStringLiteral("train.microbatch"), QStringLiteral("16")}};
    for (const auto &[field, value] : fields)
        if (!designer->setFieldText(field, value)) {
            std::fprintf(stderr, "the designer refuses %s = %s\n", qPrintable(field), qPrintable(value));
            return 1;
        }
    designer->revalidate();
    if (!designer->errors().isEmpty()) {
        std::fprintf(stderr, "the design is refused: %s\n", qPrintable(designer->errors()));
        return 1;
    }
    if (!designer->predictedRoles().isEmpty()) {
        std::fprintf(stderr, "the module was probed already: run this with an empty XDG_CACHE_HOME\n");
        return 1;
    }
    if (!save(&window, QString::fromLocal8Bit(argv[3])))
        return 1;

    QPushButton *probe = nullptr;
    for (auto *button : designer->findChildren<QPushButton *>())
        if (button->text() == QStringLiteral("Probe the module") && button->isVisible())
            probe = button;
    if (!probe) {
        std::fprintf(stderr, "no 'Probe the module' button shows: %s\n", qPrintable(designer->predictionSummary()));
        return 1;
    }
    QEventLoop probed;
    QObject::connect(designer, &optlog::DesignerView::moduleProbed, &probed, &QEventLoop::quit);
    QTimer::singleShot(300000, &probed, &QEventLoop::quit);
    probe->click();
    probed.exec();
    if (designer->predictedRoles().isEmpty()) {
        std::fprintf(stderr, "no prediction after probing: %s\n", qPrintable(designer->predictionSummary()));
        return 1;
    }
    return save(&window, QString::fromLocal8Bit(argv[4])) ? 0 : 1;
}
