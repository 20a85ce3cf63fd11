// SPDX-License-Identifier: MIT
#pragma once
// What the `optlog` under test was built with, read from its --version line (app/main.cpp). The
// suite runs against both LibTorches (docs/building.md); the few tests whose outcome differs
// between them ask here, and say why in one line where they do.

#include "tests/common/testpaths.h"

#include <QProcess>
#include <QString>
#include <cstdio>
#include <cstdlib>

namespace optlog::testing {

struct BuildFeatures
{
    bool cuda = false;           // LibTorch with CUDA (PyPI's wheel), whether or not a GPU is here
    bool oneDnnProducts = false; // the sgemm and primitive paths: LibTorch links the system's oneDNN
    bool chartReports = false;   // HTML, PDF and Markdown reports: built with Qt
};

inline const BuildFeatures &buildFeatures()
{
    static const BuildFeatures features = [] {
        QProcess optlog;
        optlog.start(optlogBinary(), {"--version"});
        optlog.waitForFinished(60000);
        const QString line = QString::fromUtf8(optlog.readAllStandardOutput());
        if (!line.startsWith(QLatin1String("optlog "))) { // never guess a build's features
            std::fprintf(stderr, "`%s --version` printed no version line: %s\n", qPrintable(optlogBinary()),
                         qPrintable(QString::fromUtf8(optlog.readAllStandardError())));
            std::exit(2);
        }
        return BuildFeatures{line.contains("(CUDA)"), line.contains("products on aten, sgemm, primitive"),
                             line.contains("reports with charts")};
    }();
    return features;
}

// How `runtime.device = "cuda"` is refused here, on a machine without a GPU: a build against a
// CPU-only LibTorch says so; a build with CUDA, that LibTorch sees no GPU.
inline QString cudaRefusal()
{
    return buildFeatures().cuda ? QStringLiteral("runtime.device = \"cuda\": LibTorch has CUDA but sees no GPU")
                                : QStringLiteral("runtime.device = \"cuda\": this optlog is built against LibTorch");
}

} // namespace optlog::testing
